"""Engine entry points only the tests and bench use: IoU of box arrays, matching from scratch, the sweep."""

from __future__ import annotations

import numpy as np

from handler.boxes import BoxTable, FloatArray, box_area
from handler.engine.evaluation import Evaluation, Thresholds
from handler.engine.iou import iou_of_overlap, overlap
from handler.engine.matching import PAIR_BUDGET, MatchResult, candidate_pairs, greedy_match
from handler.engine.sweep import Sweep, class_sweep


def paired_iou(a: FloatArray, b: FloatArray) -> FloatArray:
    """(K,) IoU of row i of `a` with row i of `b`, both (K, 4); 0 where the union is 0."""
    width = overlap(a[:, 0], a[:, 2], b[:, 0], b[:, 2])
    height = overlap(a[:, 1], a[:, 3], b[:, 1], b[:, 3])
    return iou_of_overlap(width, height, box_area(a), box_area(b))


def pairwise_iou(a: FloatArray, b: FloatArray) -> FloatArray:
    """(N, M) IoU of every box of `a` (N, 4) with every box of `b` (M, 4); empty in, empty out."""
    rows = np.repeat(np.arange(len(a)), len(b))
    cols = np.tile(np.arange(len(b)), len(a))
    return paired_iou(a[rows], b[cols]).reshape(len(a), len(b))


def match_boxes(
    gt: BoxTable, pred: BoxTable, n_images: int, iou_min: float, budget: int = PAIR_BUDGET
) -> MatchResult:
    """Match `pred` to `gt` on each image (class-agnostic), pairs need IoU ≥ `iou_min`."""
    pairs = candidate_pairs(gt, pred, n_images, iou_min, budget)
    return greedy_match(pairs, len(gt), len(pred))


def confidence_sweep(evaluation: Evaluation, thresholds: Thresholds) -> Sweep:
    """The sweep alone, class counts over the class ids the boxes use (the node sweeps through
    the CONFIDENCE_SWEEP analysis, over the paired class names)."""
    ids = np.concatenate((evaluation.gt.class_id, evaluation.all_pred.class_id))
    return class_sweep(evaluation, thresholds, int(ids.max()) + 1 if len(ids) else 0)[0]
