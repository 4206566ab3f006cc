"""A class mix-up between the two sides (issue 18): most matched pairs class-confused, one to one.

When the ids of one side index another names list than the other's (a different class order,
ids shifted by one, ids on one side and names on the other), nearly every well-placed box is
class-confused, and always the same way: predicted class p meets GT class g for one g per p.
Decided from the merged class table, so every executor finds the same mapping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from handler.boxes import IntArray
from handler.engine.analyses.confusions import CONFUSIONS
from handler.engine.analyses.per_class import PER_CLASS
from handler.engine.outcomes import Outcome
from handler.engine.plugin import GT_SIDE
from handler.engine.state import EvaluationState

# "Most" matched pairs class-confused: a detector of the GT's classes gets most classes right.
CONFUSED_SHARE_MIN: Final = 0.5
# Of the matched pairs, the share that must follow the one-to-one mapping (identity included).
MAPPED_SHARE_MIN: Final = 0.9
# Fewer confused pairs than this say nothing about a systematic mix-up.
CONFUSED_PAIRS_MIN: Final = 5


@dataclass(frozen=True)
class ClassMapping:
    """Predicted class → GT class for the mapped confused pairs, most frequent first."""

    pairs: tuple[tuple[str, str, int], ...]  # (predicted class, GT class, matched pairs)
    matched: int  # matched pairs (correct + shifted + class-confused)
    confused: int  # of those, class-confused
    mapped: int  # matched pairs that follow the mapping (same-class pairs of unmapped classes included)
    shift: int | None  # GT id - predicted id, when the same for every mapped pair (see `_shift`)


def _matched_matrix(n: int, counts: IntArray, confusions: IntArray) -> IntArray:
    """(n, n) matched pairs by (GT class, predicted class): same-class on the diagonal."""
    matrix = np.zeros((n, n), dtype=np.int64)
    np.add.at(matrix, (confusions[:, 0], confusions[:, 1]), confusions[:, 2])
    matrix[np.arange(n), np.arange(n)] += counts[:, Outcome.CORRECT] + counts[:, Outcome.SHIFTED]
    return matrix


def _mutual_best(matrix: IntArray) -> tuple[IntArray, IntArray]:
    """(GT, predicted) cells that are the largest of both their row and their column (one to one)."""
    gt_of_pred = np.argmax(matrix, axis=0)
    pred_of_gt = np.argmax(matrix, axis=1)
    preds = np.flatnonzero(matrix.max(axis=0) > 0)
    gts = gt_of_pred[preds]
    mutual = pred_of_gt[gts] == preds
    return gts[mutual], preds[mutual]


def _shift(names: tuple[str, ...], listed: int, gts: IntArray, preds: IntArray) -> int | None:
    """GT id - predicted id when it is the same for two or more mapped pairs: ids counted from
    another start. Ids are the names when all are numbers, else the places in the GT's class list
    (the first `listed` names), where a COCO results list or YOLO predictions take their names."""
    used = np.concatenate((gts, preds))
    if len(gts) < 2:
        return None
    if all(names[i].isdigit() for i in used.tolist()):
        ids = np.array([int(name) if name.isdigit() else -1 for name in names], dtype=np.int64)
    elif bool(np.all(used < listed)):
        ids = np.arange(len(names), dtype=np.int64)
    else:
        return None
    shifts = np.unique(ids[gts] - ids[preds])
    return int(shifts[0]) if len(shifts) == 1 else None


def find_class_mapping(
    names: tuple[str, ...], counts: IntArray, confusions: IntArray, listed: int = 0
) -> ClassMapping | None:
    """The one-to-one mapping most matched pairs follow, when most of them are class-confused.

    `counts` is the (n, 5) outcome table by class, `confusions` the (m, 3) rows of (GT class,
    predicted class, count) of class-confused matches, both over `names`, whose first `listed`
    are the GT's own class list.
    """
    matrix = _matched_matrix(len(names), counts, confusions)
    matched = int(matrix.sum())
    confused = matched - int(np.trace(matrix))
    if confused < CONFUSED_PAIRS_MIN or confused < CONFUSED_SHARE_MIN * matched:
        return None
    gts, preds = _mutual_best(matrix)
    mapped = int(matrix[gts, preds].sum())
    crossed = gts != preds
    if mapped < MAPPED_SHARE_MIN * matched or not crossed.any():
        return None
    gts, preds = gts[crossed], preds[crossed]
    order = np.lexsort((preds, -matrix[gts, preds]))
    pairs = tuple(
        (names[p], names[g], int(matrix[g, p]))
        for g, p in zip(gts[order].tolist(), preds[order].tolist(), strict=True)
    )
    return ClassMapping(pairs, matched, confused, mapped, _shift(names, listed, gts, preds))


def class_mapping(state: EvaluationState) -> ClassMapping | None:
    """The class mix-up of a merged state, if any (its warning, and the suspects it withdraws)."""
    per_class, confusions = state.of(PER_CLASS), state.of(CONFUSIONS)
    # Both partials merge into the one class order; renamed by name all the same, to be safe.
    index = {name: i for i, name in enumerate(per_class.names)}
    rows = np.array([index[name] for name in confusions.names], dtype=np.int64).reshape(-1)
    pairs = confusions.pairs.copy()
    pairs[:, :2] = rows[pairs[:, :2]] if len(pairs) else pairs[:, :2]
    listed = sum(1 for rank in per_class.ranks if rank[0] == GT_SIDE)
    return find_class_mapping(per_class.names, per_class.counts, pairs, listed)
