"""Where the work is: outcomes per class, image and box size, confusions and near misses.

Every figure is a vectorised count over the boxes of one `Evaluation` (bincount, lexsort),
with no Python loop per box. Outcome counts come as (k, 5) arrays in `Outcome` order: a
GT box counts under its own key (matched outcomes and false negatives), a false positive
under its prediction's key, so the rows sum to the evaluation's tally.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from handler.boxes import BoolArray, BoxTable, FloatArray, IntArray
from handler.engine.evaluation import Evaluation
from handler.engine.outcomes import Outcome
from handler.engine.score import assistance_scores

N_OUTCOMES: Final = len(Outcome)
# COCO's area ranges, in pixels²: small < 32², medium < 96², large from 96².
SIZE_NAMES: Final = ("small", "medium", "large")
SIZE_BOUNDS: Final = (32.0**2, 96.0**2)


def outcome_counts(evaluation: Evaluation, gt_key: IntArray, pred_key: IntArray, n_keys: int) -> IntArray:
    """(n_keys, 5) counts: each GT box's outcome under `gt_key`, each FP under `pred_key`."""
    outcomes = evaluation.outcomes
    fp = outcomes.pred_outcome == Outcome.FALSE_POSITIVE
    keys = np.concatenate((gt_key, pred_key[fp]))
    codes = np.concatenate((outcomes.gt_outcome, outcomes.pred_outcome[fp]))
    flat = np.bincount(keys * N_OUTCOMES + codes, minlength=n_keys * N_OUTCOMES)
    return flat.reshape(n_keys, N_OUTCOMES).astype(np.int64)


def per_class(evaluation: Evaluation, n_classes: int) -> IntArray:
    """FP by predicted class; everything else (FN and confusions too) by GT class."""
    return outcome_counts(evaluation, evaluation.gt.class_id, evaluation.pred.class_id, n_classes)


def per_image(evaluation: Evaluation, n_images: int) -> IntArray:
    return outcome_counts(evaluation, evaluation.gt.image, evaluation.pred.image, n_images)


def size_bucket(boxes: BoxTable, area_scale: FloatArray) -> IntArray:
    """0 small, 1 medium, 2 large, by pixel area; `area_scale[image]` turns a box's area into pixels²."""
    pixels = boxes.area * area_scale[boxes.image]
    return np.searchsorted(np.asarray(SIZE_BOUNDS), pixels, side="right").astype(np.int64)


def by_size(evaluation: Evaluation, area_scale: FloatArray) -> IntArray:
    """(3, 5) counts by GT box size; a false positive goes by its own box's size (as COCOeval does).

    `area_scale` is 1 per image for pixel boxes, width · height for normalised ones.
    """
    gt_size = size_bucket(evaluation.gt, area_scale)
    pred_size = size_bucket(evaluation.pred, area_scale)
    return outcome_counts(evaluation, gt_size, pred_size, len(SIZE_NAMES))


def row_scores(counts: IntArray) -> FloatArray:
    """Assistance score of every row, 0 where a row is empty."""
    correct, shifted, confused = (
        counts[:, o] for o in (Outcome.CORRECT, Outcome.SHIFTED, Outcome.CLASS_CONFUSED)
    )
    return assistance_scores(correct, shifted, confused, counts.sum(axis=1))


def most_time_left_first(counts: IntArray, seconds: FloatArray) -> IntArray:
    """Rows with any box: most labeler seconds left first, then lowest score, then row order.

    `seconds` are each row's labeler seconds with the predictions (timecost.labeler_seconds),
    so a two-box class with a score of 0 no longer hides the class where the work is.
    """
    rows = np.flatnonzero(counts.sum(axis=1) > 0)
    return rows[np.lexsort((rows, row_scores(counts[rows]), -seconds[rows]))]


def most_work(seconds: FloatArray, top: int) -> IntArray:
    """The `top` rows with the most labeler seconds (> 0), most first, ties in row order."""
    rows = np.flatnonzero(seconds > 0)
    return rows[np.lexsort((rows, -seconds[rows]))][:top]


@dataclass(frozen=True)
class Confusions:
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


@dataclass(frozen=True)
class NearMisses:
    """False positives overlapping a missed GT box of their class with floor ≤ IoU < IOU_MIN.

    Each false positive counts once, in the band of its best such IoU; `edges` are the
    band bounds (0.1, 0.2, ..., IOU_MIN), `counts[i]` the false positives in [edges[i], edges[i+1]).
    """

    edges: FloatArray
    counts: IntArray
    missed_gt: int

    @property
    def count(self) -> int:
        return int(self.counts.sum())


def band_edges(floor: float, iou_min: float) -> FloatArray:
    """floor, floor + 0.1, ... below `iou_min`, then `iou_min`; one edge (no band) when iou_min ≤ floor."""
    steps = int(np.ceil(round((iou_min - floor) * 10, 9)))
    return np.append(np.round(floor + 0.1 * np.arange(max(steps, 0)), 9), max(iou_min, floor))


def near_pairs(evaluation: Evaluation, low: float, iou_min: float) -> BoolArray:
    """Per candidate pair: a false positive on a missed GT box of its class with low ≤ IoU < iou_min."""
    outcomes, pairs, gt, pred = evaluation.outcomes, evaluation.pairs, evaluation.gt, evaluation.all_pred
    false_positive = np.zeros(len(pred), dtype=bool)  # over all predictions, as `pairs` index them
    false_positive[evaluation.kept] = outcomes.pred_outcome == Outcome.FALSE_POSITIVE
    missed = outcomes.gt_outcome == Outcome.FALSE_NEGATIVE
    near: BoolArray = (
        false_positive[pairs.pred]
        & missed[pairs.gt]
        & (gt.class_id[pairs.gt] == pred.class_id[pairs.pred])
        & (pairs.iou >= low)
        & (pairs.iou < iou_min)
    )
    return near


def near_misses(evaluation: Evaluation, floor: float, iou_min: float) -> NearMisses:
    edges = band_edges(floor, iou_min)
    pairs, pred = evaluation.pairs, evaluation.all_pred
    near = near_pairs(evaluation, edges[0], iou_min)
    best = np.full(len(pred), -np.inf)
    np.maximum.at(best, pairs.pred[near], pairs.iou[near])
    band = np.searchsorted(edges, best[np.isfinite(best)], side="right") - 1
    counts = np.bincount(band, minlength=len(edges) - 1).astype(np.int64)
    return NearMisses(edges, counts, len(np.unique(pairs.gt[near])))
