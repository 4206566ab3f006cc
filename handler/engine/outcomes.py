"""Outcomes of every box (SPEC §6) and their additive tally (SPEC §7)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Final

import numpy as np

from handler.boxes import BoolArray, BoxTable, FloatArray, IntArray
from handler.engine.exactsum import ExactSum
from handler.engine.matching import MatchResult
from handler.engine.score import assistance_score, grade


class Outcome(IntEnum):
    CORRECT = 0
    SHIFTED = 1
    CLASS_CONFUSED = 2
    FALSE_POSITIVE = 3
    FALSE_NEGATIVE = 4


OUTCOMES: Final = tuple(outcome.name.lower() for outcome in Outcome)


@dataclass(frozen=True)
class BoxOutcomes:
    """The outcome of every GT box and every kept prediction, with the match behind it."""

    gt_outcome: IntArray  # (n_gt,) Outcome values, FALSE_NEGATIVE when unmatched
    pred_outcome: IntArray  # (n_pred,) Outcome values, FALSE_POSITIVE when unmatched
    match: MatchResult


def pair_outcomes(same_class: BoolArray, iou: FloatArray, iou_perfect: float) -> IntArray:
    """SPEC §6 for matched pairs: correct, shifted, or class-confused."""
    return np.where(
        same_class,
        np.where(iou >= iou_perfect, int(Outcome.CORRECT), int(Outcome.SHIFTED)),
        int(Outcome.CLASS_CONFUSED),
    )


def assign_outcomes(gt: BoxTable, pred: BoxTable, match: MatchResult, iou_perfect: float) -> BoxOutcomes:
    """Sort each matched pair into correct / shifted / class-confused; the rest are FP / FN."""
    pred_outcome = np.full(len(pred), int(Outcome.FALSE_POSITIVE), dtype=np.int64)
    matched = np.flatnonzero(match.pred_match >= 0)
    same_class = pred.class_id[matched] == gt.class_id[match.pred_match[matched]]
    pred_outcome[matched] = pair_outcomes(same_class, match.pred_iou[matched], iou_perfect)
    gt_outcome = np.full(len(gt), int(Outcome.FALSE_NEGATIVE), dtype=np.int64)
    gt_outcome[match.pred_match[matched]] = pred_outcome[matched]
    return BoxOutcomes(gt_outcome, pred_outcome, match)


@dataclass(frozen=True)
class Tally:
    """Additive figures of an evaluation: two tallies of disjoint images add up exactly.

    `counts[o]` counts outcome `o` (a matched pair counts once); `same_class_iou` sums the
    IoU of every correct or shifted pair exactly, so the mean does not depend on how the
    images were split into shards or in which order the shards were added.
    """

    counts: IntArray
    same_class_iou: ExactSum

    @classmethod
    def zero(cls) -> Tally:
        return cls(np.zeros(len(Outcome), dtype=np.int64), ExactSum())

    @classmethod
    def of(cls, outcomes: BoxOutcomes) -> Tally:
        counts = np.bincount(outcomes.pred_outcome, minlength=len(Outcome)).astype(np.int64)
        counts[Outcome.FALSE_NEGATIVE] = int(np.count_nonzero(outcomes.gt_outcome == Outcome.FALSE_NEGATIVE))
        same_class = np.isin(outcomes.pred_outcome, (Outcome.CORRECT, Outcome.SHIFTED))
        return cls(counts, ExactSum.of(outcomes.match.pred_iou[same_class]))

    @classmethod
    def of_pairs(
        cls, pair_outcome: IntArray, iou: FloatArray, false_positives: int, false_negatives: int
    ) -> Tally:
        """From the outcomes and IoUs of the matched pairs alone, plus the unmatched counts."""
        counts = np.bincount(pair_outcome, minlength=len(Outcome)).astype(np.int64)
        counts[Outcome.FALSE_POSITIVE], counts[Outcome.FALSE_NEGATIVE] = false_positives, false_negatives
        return cls(counts, ExactSum.of(iou[pair_outcome <= Outcome.SHIFTED]))

    def __add__(self, other: Tally) -> Tally:
        return Tally(self.counts + other.counts, self.same_class_iou + other.same_class_iou)

    def count(self, outcome: Outcome) -> int:
        return int(self.counts[outcome])

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    @property
    def mean_iou(self) -> float | None:
        return self.same_class_iou.mean

    def _score_args(self) -> tuple[int, int, int, int]:
        return (
            self.count(Outcome.CORRECT),
            self.count(Outcome.SHIFTED),
            self.count(Outcome.CLASS_CONFUSED),
            self.total,
        )

    @property
    def assistance_score(self) -> float:
        return assistance_score(*self._score_args())

    @property
    def grade(self) -> str:
        return grade(*self._score_args())

    def shares(self) -> dict[str, float]:
        total = self.total
        return {
            name: (int(self.counts[o]) / total if total else 0.0)
            for o, name in zip(Outcome, OUTCOMES, strict=True)
        }

    def count_dict(self) -> dict[str, int]:
        counts = {name: int(self.counts[o]) for o, name in zip(Outcome, OUTCOMES, strict=True)}
        counts["total"] = self.total
        return counts
