"""The assistance score at every confidence threshold, re-using one evaluation's IoU work.

The candidate pairs of an evaluation cover every prediction (threshold 0), so each
threshold only selects pairs and re-runs the greedy matching: no IoU is computed again.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Final

import numpy as np

from handler.boxes import BoolArray, IntArray
from handler.engine.analysis import count_outcomes
from handler.engine.evaluation import Evaluation, Thresholds, keep_mask
from handler.engine.matching import CandidatePairs, greedy_match
from handler.engine.outcomes import N_OUTCOMES, Outcome, Tally, pair_outcomes

# 0.00, 0.05, ..., 0.95; the threshold actually used is added to these.
SWEEP_GRID: Final = tuple(round(0.05 * step, 2) for step in range(20))
# A better threshold is recommended only when it gains at least this much score.
RECOMMEND_GAIN: Final = Fraction(2, 100)


@dataclass(frozen=True)
class SweepPoint:
    threshold: float
    predictions_kept: int
    tally: Tally

    def __add__(self, other: SweepPoint) -> SweepPoint:
        if other.threshold != self.threshold:
            raise ValueError(
                f"Expected sweep points at one threshold but got {self.threshold}, {other.threshold}"
            )
        return SweepPoint(
            self.threshold, self.predictions_kept + other.predictions_kept, self.tally + other.tally
        )


@dataclass(frozen=True)
class Sweep:
    """Points in ascending threshold; `used` is the evaluation's own, `best` maximises the score.

    Sweeps of disjoint images add point by point (the thresholds are the same everywhere).
    """

    points: tuple[SweepPoint, ...]
    used_threshold: float

    def __add__(self, other: Sweep) -> Sweep:
        if len(other.points) != len(self.points):
            raise ValueError("Expected sweeps over the same thresholds")
        return Sweep(
            tuple(a + b for a, b in zip(self.points, other.points, strict=True)), self.used_threshold
        )

    @property
    def used(self) -> SweepPoint:
        return next(p for p in self.points if p.threshold == self.used_threshold)

    @property
    def best(self) -> SweepPoint:
        return _best(self.points, self.used)

    @property
    def gain(self) -> Fraction:
        return self.best.tally.score_fraction - self.used.tally.score_fraction

    @property
    def recommended(self) -> bool:
        return self.gain >= RECOMMEND_GAIN


def sweep_thresholds(used: float) -> list[float]:
    return sorted({*SWEEP_GRID, used})


def _best(points: tuple[SweepPoint, ...], used: SweepPoint) -> SweepPoint:
    """Highest score; on a tie the used threshold, else the lowest one."""
    return max(points, key=lambda p: (p.tally.score_fraction, p is used, -p.threshold))


def _counts_at(
    evaluation: Evaluation, usable: CandidatePairs, kept: BoolArray, iou_perfect: float, n_classes: int
) -> tuple[Tally, IntArray]:
    """The tally and the (n_classes, 5) class counts of matching only the kept predictions.

    Prediction indices stay those of all predictions (no `pred[kept]` table is built):
    dropping predictions keeps the pairs' greedy order, so the matching is the same.
    Class counts go as `analysis.counts_by_class`: FP by predicted class, the rest by GT class.
    """
    gt, pred = evaluation.gt, evaluation.all_pred
    match = greedy_match(usable[kept[usable.pred]], len(gt), len(pred))
    matched_gt = np.flatnonzero(match.gt_match >= 0)
    matched_pred = match.gt_match[matched_gt]
    iou = match.pred_iou[matched_pred]
    outcome = pair_outcomes(gt.class_id[matched_gt] == pred.class_id[matched_pred], iou, iou_perfect)
    unmatched_pred = int(np.count_nonzero(kept)) - len(matched_gt)
    tally = Tally.of_pairs(outcome, iou, unmatched_pred, len(gt) - len(matched_gt))
    gt_outcome = np.full(len(gt), int(Outcome.FALSE_NEGATIVE), dtype=np.int64)
    gt_outcome[matched_gt] = outcome
    fp_class = pred.class_id[kept & (match.pred_match < 0)]
    return tally, count_outcomes(gt.class_id, gt_outcome, fp_class, n_classes)


def class_sweep(evaluation: Evaluation, thresholds: Thresholds, n_classes: int) -> tuple[Sweep, IntArray]:
    """Re-match at every threshold of the sweep, from the evaluation's candidate pairs.

    Also the outcome counts of every class at every threshold: (n_classes, n_thresholds, 5).
    """
    confidence = evaluation.all_pred.confidence
    usable = evaluation.pairs[evaluation.pairs.iou >= thresholds.iou_min]  # the same at every threshold
    # Kept sets are nested, so an equal count of kept predictions means an equal set.
    done: dict[int, tuple[Tally, IntArray]] = {}
    points, classes = [], []
    for threshold in sweep_thresholds(thresholds.confidence_threshold):
        kept = keep_mask(confidence, threshold)
        count = int(np.count_nonzero(kept))
        if count not in done:
            done[count] = _counts_at(evaluation, usable, kept, thresholds.iou_perfect, n_classes)
        tally, by_class = done[count]
        points.append(SweepPoint(threshold, count, tally))
        classes.append(by_class)
    by_threshold = np.stack(classes, axis=1) if classes else np.zeros((n_classes, 0, N_OUTCOMES), np.int64)
    return Sweep(tuple(points), thresholds.confidence_threshold), by_threshold
