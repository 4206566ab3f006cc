"""Class confusions: GT class → predicted class of the class-confused matches, by class name."""

from __future__ import annotations

from typing import Final

import msgspec
import numpy as np

from handler.boxes import FloatArray, IntArray
from handler.engine.evaluation import Evaluation
from handler.engine.outcomes import Outcome
from handler.engine.plugin import Analysis, ClassRank, ShardContext, class_union


class Confusions(msgspec.Struct, frozen=True):
    """GT class → predicted class of class-confused matches, most frequent first."""

    gt_class: IntArray
    pred_class: IntArray
    count: IntArray


def confusion_pairs(evaluation: Evaluation) -> IntArray:
    """(m, 3) rows of (GT class, predicted class, count) of the class-confused matches, each pair once."""
    outcomes = evaluation.outcomes
    confused = np.flatnonzero(outcomes.pred_outcome == Outcome.CLASS_CONFUSED)
    gt_class = evaluation.gt.class_id[outcomes.match.pred_match[confused]]
    return count_pairs(
        np.stack((gt_class, evaluation.pred.class_id[confused]), axis=1), np.ones(len(confused))
    )


def count_pairs(pairs: IntArray, counts: IntArray | FloatArray) -> IntArray:
    """(m, 3) rows of (first, second, summed count), one per distinct (first, second)."""
    unique, inverse = np.unique(pairs.reshape(-1, 2), axis=0, return_inverse=True)
    summed = np.bincount(inverse.reshape(-1), weights=counts, minlength=len(unique)).astype(np.int64)
    return np.column_stack((unique.astype(np.int64), summed)).reshape(-1, 3)


def top_confusions(pairs: IntArray, top: int) -> Confusions:
    """Most frequent first; ties by GT class, then predicted class."""
    order = np.lexsort((pairs[:, 1], pairs[:, 0], -pairs[:, 2]))[:top]
    return Confusions(pairs[order, 0], pairs[order, 1], pairs[order, 2])


class ClassPairs(msgspec.Struct, frozen=True):
    """(m, 3) rows of (GT class, predicted class, count), the classes indexing `names`."""

    names: tuple[str, ...]
    ranks: tuple[ClassRank, ...]
    pairs: IntArray

    def __add__(self, other: ClassPairs) -> ClassPairs:
        names, ranks, rows = class_union((self.names, self.ranks), (other.names, other.ranks))
        renamed = [
            np.column_stack((side_rows[side.pairs[:, :2]], side.pairs[:, 2]))
            for side, side_rows in zip((self, other), rows, strict=True)
        ]
        merged = np.concatenate(renamed).reshape(-1, 3)
        return ClassPairs(names, ranks, count_pairs(merged[:, :2], merged[:, 2]))


def _shard(evaluation: Evaluation, context: ShardContext) -> ClassPairs:
    return ClassPairs(context.class_names, context.class_ranks, confusion_pairs(evaluation))


CONFUSIONS: Final = Analysis[ClassPairs]("confusions", _shard, ClassPairs.__add__)
