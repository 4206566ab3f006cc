"""Outcome counts by any key (class, image, size), and the orders that say where the work is.

Every figure is a vectorised count over the boxes of one `Evaluation` (bincount, lexsort),
with no Python loop per box. Outcome counts come as (k, 5) arrays in `Outcome` order: a
GT box counts under its own key (matched outcomes and false negatives), a false positive
under its prediction's key, so the rows sum to the evaluation's tally.
"""

from __future__ import annotations

import numpy as np

from handler.boxes import FloatArray, IntArray
from handler.engine.counts import OutcomeCounts
from handler.engine.evaluation import Evaluation
from handler.engine.exactsum import ExactSum
from handler.engine.outcomes import N_OUTCOMES, Outcome, Tally, same_class_pairs


def count_outcomes(gt_key: IntArray, gt_outcome: IntArray, fp_key: IntArray, n_keys: int) -> IntArray:
    """(n_keys, N_OUTCOMES) counts: each GT box's outcome under its key, one false positive per `fp_key`."""
    keys = np.concatenate((gt_key * N_OUTCOMES + gt_outcome, fp_key * N_OUTCOMES + Outcome.FALSE_POSITIVE))
    flat = np.bincount(keys, minlength=n_keys * N_OUTCOMES)
    return flat.reshape(n_keys, N_OUTCOMES).astype(np.int64)


def counts_by_key(evaluation: Evaluation, gt_key: IntArray, pred_key: IntArray, n_keys: int) -> IntArray:
    """(n_keys, N_OUTCOMES) counts: each GT box's outcome under `gt_key`, each FP under `pred_key`."""
    outcomes = evaluation.outcomes
    fp = outcomes.pred_outcome == Outcome.FALSE_POSITIVE
    return count_outcomes(gt_key, outcomes.gt_outcome, pred_key[fp], n_keys)


def counts_by_class(evaluation: Evaluation, n_classes: int) -> IntArray:
    """FP by predicted class; everything else (FN and confusions too) by GT class."""
    return counts_by_key(evaluation, evaluation.gt.class_id, evaluation.pred.class_id, n_classes)


def counts_by_image(evaluation: Evaluation, n_images: int) -> IntArray:
    return counts_by_key(evaluation, evaluation.gt.image, evaluation.pred.image, n_images)


def per_image_tallies(evaluation: Evaluation, n_images: int) -> list[Tally]:
    """Each image's own tally; they add up to `evaluation.tally` exactly (mmeval's per-sample results)."""
    outcomes = evaluation.outcomes
    same_class = same_class_pairs(outcomes.pred_outcome)
    ious = ExactSum.per_group(
        outcomes.match.pred_iou[same_class], evaluation.pred.image[same_class], n_images
    )
    counts = counts_by_image(evaluation, n_images)
    return [Tally(row, iou) for row, iou in zip(counts, ious, strict=True)]


def most_time_left_first(counts: IntArray, seconds: FloatArray) -> IntArray:
    """Rows with any box: most labeler seconds left first, then lowest score, then row order.

    `seconds` are each row's labeler seconds with the predictions (`OutcomeCounts.labeler_seconds`),
    so a two-box class with a score of 0 no longer hides the class where the work is.
    """
    rows = np.flatnonzero(counts.sum(axis=1) > 0)
    ordered: IntArray = rows[np.lexsort((rows, OutcomeCounts(counts[rows]).scores, -seconds[rows]))]
    return ordered


def review_order(seconds: FloatArray) -> IntArray:
    """Every row, most labeler seconds first, ties in row order: the review queue's order."""
    order: IntArray = np.lexsort((np.arange(len(seconds)), -seconds))
    return order


def most_work(seconds: FloatArray, top: int) -> IntArray:
    """The first `top` rows of the review order that have labeler seconds (> 0)."""
    order = review_order(seconds)
    first: IntArray = order[seconds[order] > 0][:top]
    return first
