"""The assistance score at every confidence threshold, re-using one evaluation's IoU work.

The candidate pairs of an evaluation cover every prediction (threshold 0), so each
threshold only selects pairs and re-runs the greedy matching: no IoU is computed again.
"""

from __future__ import annotations

from typing import Final

import msgspec
import numpy as np

from handler.boxes import FloatArray, IntArray
from handler.engine.breakdowns import count_outcomes
from handler.engine.counts import OutcomeCounts
from handler.engine.evaluation import Evaluation, Thresholds, keep_mask
from handler.engine.matching import CandidatePairs, Levels, matched_by_level
from handler.engine.outcomes import N_OUTCOMES, Outcome, Tally, pair_outcomes
from handler.engine.routing import best_single
from handler.engine.timecost import TimeCosts

# 0.00, 0.05, ..., 0.95; the threshold actually used is added to these.
SWEEP_GRID: Final = tuple(round(0.05 * step, 2) for step in range(20))


class SweepPoint(msgspec.Struct, frozen=True):
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


class Sweep(msgspec.Struct, frozen=True):
    """Points in ascending threshold, the threshold used among them (`sweep_thresholds`).

    Which one was used is the inputs' to say (`NodeInputs.confidence`), not held here again:
    `choice(used, costs)` gives that point and the best (most labeler time saved). Sweeps of
    disjoint images add point by point (the thresholds are the same everywhere).
    """

    points: tuple[SweepPoint, ...]

    def __add__(self, other: Sweep) -> Sweep:
        if len(other.points) != len(self.points):
            raise ValueError("Expected sweeps over the same thresholds")
        return Sweep(tuple(a + b for a, b in zip(self.points, other.points, strict=True)))

    def column(self, threshold: float) -> int:
        """The position of `threshold` among the points (the sweep always has the used one)."""
        return next(i for i, point in enumerate(self.points) if point.threshold == threshold)

    def choice(self, used: float, costs: TimeCosts) -> SweepChoice:
        """The used point, and the one whose labeler seconds are fewest (`routing.best_single`)."""
        column = self.column(used)
        seconds = OutcomeCounts(np.stack([point.tally.counts for point in self.points])).labeler_seconds(
            costs
        )
        return SweepChoice(self.points[column], self.points[best_single(seconds, column)])


class SweepChoice(msgspec.Struct, frozen=True):
    """The point of the threshold used, and the one that saves the most labeler time."""

    used: SweepPoint
    best: SweepPoint


def sweep_thresholds(used: float) -> list[float]:
    return sorted({*SWEEP_GRID, used})


class _Usable(msgspec.Struct, frozen=True):
    """The pairs any threshold can match (IoU ≥ iou_min), on the predictions that have one.

    Those predictions are numbered 0.. in input order (`rows` are theirs among all predictions),
    so the pairs keep their greedy order; a threshold's matching touches only them, however many
    predictions without a usable pair the shard has (most of them, on a big run).
    """

    pairs: CandidatePairs  # `pred` numbers the predictions in `rows`
    rows: IntArray
    class_id: IntArray  # of each of `rows`

    @classmethod
    def of(cls, evaluation: Evaluation, iou_min: float) -> _Usable:
        usable = evaluation.pairs[evaluation.pairs.iou >= iou_min]
        # Each prediction's number among those with a usable pair: its rank, without a sort.
        has_pair = np.zeros(len(evaluation.all_pred), dtype=bool)
        has_pair[usable.pred] = True
        rank = np.cumsum(has_pair) - 1
        rows = np.flatnonzero(has_pair)
        pairs = CandidatePairs(usable.gt, rank[usable.pred], usable.iou)
        return cls(pairs, rows, evaluation.all_pred.class_id[rows])


def _kept_levels(confidence: FloatArray, thresholds: list[float]) -> Levels:
    """Per prediction, at how many of the (ascending) thresholds it is kept (`keep_mask`).

    Kept sets are nested, so the prediction is kept at threshold k exactly when its level > k.
    """
    level = np.zeros(len(confidence), dtype=np.int8)
    for threshold in thresholds:
        level += keep_mask(confidence, threshold)
    return level


def _kept_by_class(class_id: IntArray, level: Levels, n_classes: int, n_thresholds: int) -> IntArray:
    """(n_classes, n_thresholds) kept predictions of each class at each threshold."""
    at_level = np.bincount(class_id * (n_thresholds + 1) + level, minlength=n_classes * (n_thresholds + 1))
    above = np.cumsum(at_level.reshape(n_classes, n_thresholds + 1)[:, ::-1], axis=1)[:, ::-1]
    return above[:, 1:].astype(np.int64)


def _counts_at(
    evaluation: Evaluation, usable: _Usable, taken: IntArray, kept_by_class: IntArray, iou_perfect: float
) -> tuple[Tally, IntArray]:
    """The tally and the (n_classes, 5) class counts of matching only the kept predictions, whose
    matching takes the pairs `taken` (positions in `usable.pairs`); `kept_by_class` counts every
    kept prediction by class.
    Class counts go as `breakdowns.counts_by_class`: FP by predicted class, the rest by GT class.
    """
    gt = evaluation.gt
    matched_gt, iou = usable.pairs.gt[taken], usable.pairs.iou[taken]
    matched_class = usable.class_id[usable.pairs.pred[taken]]
    outcome = pair_outcomes(gt.class_id[matched_gt] == matched_class, iou, iou_perfect)
    unmatched_pred = int(kept_by_class.sum()) - len(matched_gt)
    tally = Tally.of_pairs(outcome, iou, unmatched_pred, len(gt) - len(matched_gt))
    gt_outcome = np.full(len(gt), int(Outcome.FALSE_NEGATIVE), dtype=np.int64)
    gt_outcome[matched_gt] = outcome
    n_classes = len(kept_by_class)
    by_class = count_outcomes(gt.class_id, gt_outcome, np.empty(0, dtype=np.int64), n_classes)
    by_class[:, Outcome.FALSE_POSITIVE] = kept_by_class - np.bincount(matched_class, minlength=n_classes)
    return tally, by_class


def class_sweep(evaluation: Evaluation, thresholds: Thresholds, n_classes: int) -> tuple[Sweep, IntArray]:
    """Re-match at every threshold of the sweep, from the evaluation's candidate pairs.

    Also the outcome counts of every class at every threshold: (n_classes, n_thresholds, 5).
    """
    pred = evaluation.all_pred
    usable = _Usable.of(evaluation, thresholds.iou_min)  # the same at every threshold
    grid = sweep_thresholds(thresholds.confidence_threshold)
    level = _kept_levels(pred.confidence, grid)
    kept_by_class = _kept_by_class(pred.class_id, level, n_classes, len(grid))
    pair_level = level[usable.rows][usable.pairs.pred]  # a pair is kept while its prediction is
    # Dropping predictions keeps the pairs' greedy order: every threshold's matching in one pass.
    taken = matched_by_level(usable.pairs, len(evaluation.gt), len(usable.rows), pair_level)
    # An equal count of kept predictions means an equal (nested) set: one count per set.
    done: dict[int, tuple[Tally, IntArray]] = {}
    points, classes = [], []
    for k, threshold in enumerate(grid):
        count = int(kept_by_class[:, k].sum())
        if count not in done:
            at_k = np.flatnonzero(taken & np.uint32(1 << k))
            done[count] = _counts_at(evaluation, usable, at_k, kept_by_class[:, k], thresholds.iou_perfect)
        tally, by_class = done[count]
        points.append(SweepPoint(threshold, count, tally))
        classes.append(by_class)
    by_threshold = np.stack(classes, axis=1) if classes else np.zeros((n_classes, 0, N_OUTCOMES), np.int64)
    return Sweep(tuple(points)), by_threshold
