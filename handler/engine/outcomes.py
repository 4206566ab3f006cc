"""Outcomes of every box (contract §6) and their additive tally (contract §7)."""

from __future__ import annotations

from enum import IntEnum
from fractions import Fraction
from typing import Final

import msgspec
import numpy as np

from handler.boxes import BoolArray, BoxTable, FloatArray, IntArray
from handler.engine.exactsum import ExactSum
from handler.engine.matching import MatchResult
from handler.engine.score import assistance_score, grade, score_fraction


class Outcome(IntEnum):
    """The five outcomes (contract §6), each with what the labeler does and how the page names it.

    `key` names it in the findings and the ledger, `action` is the labeler's action
    (and the `TimeCosts` field that prices it), `label` the page's card title and
    `short_label` the name in a narrow table column.
    """

    _value_: int
    action: str
    label: str
    short_label: str

    def __new__(cls, value: int, action: str, label: str, short_label: str) -> Outcome:
        member = int.__new__(cls, value)
        member._value_ = value
        member.action, member.label, member.short_label = action, label, short_label
        return member

    CORRECT = 0, "accept", "Correct", "Correct"
    SHIFTED = 1, "nudge", "Shifted", "Shifted"
    CLASS_CONFUSED = 2, "relabel", "Class-confused", "Confused"
    FALSE_POSITIVE = 3, "delete", "False positive", "FP"
    FALSE_NEGATIVE = 4, "draw", "False negative", "FN"

    @property
    def key(self) -> str:
        return self.name.lower()

    @property
    def cost_field(self) -> str:
        """The `TimeCosts` field with the seconds of this outcome's action (named after it)."""
        return self.action


# Derived views in Outcome order, for the callers that index by outcome code.
OUTCOMES: Final = tuple(outcome.key for outcome in Outcome)
N_OUTCOMES: Final = len(Outcome)


class BoxOutcomes(msgspec.Struct, frozen=True):
    """The outcome of every GT box and every kept prediction, with the match behind it."""

    gt_outcome: IntArray  # (n_gt,) Outcome values, FALSE_NEGATIVE when unmatched
    pred_outcome: IntArray  # (n_pred,) Outcome values, FALSE_POSITIVE when unmatched
    match: MatchResult


def pair_outcomes(same_class: BoolArray, iou: FloatArray, iou_perfect: float) -> IntArray:
    """contract §6 for matched pairs: correct, shifted, or class-confused."""
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


def same_class_pairs(outcome: IntArray) -> BoolArray:
    """The correct and shifted ones: the pairs whose IoU the mean IoU averages."""
    same_class: BoolArray = outcome <= Outcome.SHIFTED
    return same_class


class Tally(msgspec.Struct, frozen=True):
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
        same_class = same_class_pairs(outcomes.pred_outcome)
        return cls(counts, ExactSum.of(outcomes.match.pred_iou[same_class]))

    @classmethod
    def of_pairs(
        cls, pair_outcome: IntArray, iou: FloatArray, false_positives: int, false_negatives: int
    ) -> Tally:
        """From the outcomes and IoUs of the matched pairs alone, plus the unmatched counts."""
        counts = np.bincount(pair_outcome, minlength=len(Outcome)).astype(np.int64)
        counts[Outcome.FALSE_POSITIVE], counts[Outcome.FALSE_NEGATIVE] = false_positives, false_negatives
        return cls(counts, ExactSum.of(iou[same_class_pairs(pair_outcome)]))

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
    def score_fraction(self) -> Fraction:
        return score_fraction(*self._score_args())

    @property
    def assistance_score(self) -> float:
        return assistance_score(*self._score_args())

    @property
    def grade(self) -> str:
        return grade(*self._score_args())

    def shares(self) -> dict[str, float]:
        total = self.total
        return {o.key: (int(self.counts[o]) / total if total else 0.0) for o in Outcome}

    def count_dict(self) -> dict[str, int]:
        counts = {o.key: int(self.counts[o]) for o in Outcome}
        counts["total"] = self.total
        return counts
