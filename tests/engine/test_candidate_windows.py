"""Pruned candidate pairs equal every same-image pair with IoU ≥ the floor, found the slow way.

The x-windows and the y-overlap bound skip pairs before computing their IoU; here random
tables with far-off, huge, tiny, rounded, touching and (for the fallback) inverted boxes
are checked against `pairwise_iou` over every pair of every image. An evaluation's pairs
(every prediction from IOU_MIN, its false positives from the near-miss floor) are those pairs too.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.engine import pairwise_iou

from handler.boxes import BoxTable
from handler.engine.evaluation import Thresholds, evaluate, pair_floor
from handler.engine.matching import candidate_pairs, in_greedy_order
from handler.engine.outcomes import Outcome

FLOORS = (1e-6, 0.1, 0.3, 0.5, 0.95, 1.0)


def _boxes(rng: np.random.Generator, n: int, scale: float, offset: float) -> np.ndarray:
    corner = rng.random((n, 2)) * scale + offset
    size = rng.random((n, 2)) ** 3 * scale * rng.random()
    if rng.random() < 0.3:
        corner, size = np.round(corner), np.round(size)
    return np.concatenate([corner, corner + size], axis=1)


def _tables(seed: int) -> tuple[BoxTable, BoxTable, int]:
    rng = np.random.default_rng(seed)
    n_images = int(rng.integers(1, 12))
    scale = 10.0 ** int(rng.integers(-3, 7))
    offset = float(rng.normal() * 10.0 ** int(rng.integers(0, 8)))
    gt = _boxes(rng, int(rng.integers(0, 80)), scale, offset)
    pred = _boxes(rng, int(rng.integers(0, 120)), scale, offset)
    if len(gt) and len(pred):  # predictions near GT boxes, so that pairs exist
        near = min(len(gt), len(pred))
        pred[:near] = gt[rng.integers(0, len(gt), near)] + rng.normal(size=(near, 4)) * scale * 0.01
        pred[:, 2:] = np.maximum(pred[:, 2:], pred[:, :2])
    if seed % 4 == 0 and len(pred):  # a few inverted boxes: no pruning may apply
        flip = rng.random(len(pred)) < 0.2
        pred[flip] = pred[flip][:, [2, 3, 0, 1]]
    return (
        BoxTable.build(gt, np.zeros(len(gt)), rng.integers(0, n_images, len(gt))),
        BoxTable.build(pred, np.zeros(len(pred)), rng.integers(0, n_images, len(pred))),
        n_images,
    )


def _slow(gt: BoxTable, pred: BoxTable, n_images: int, floor: float) -> set[tuple[int, int, float]]:
    pairs = set()
    for image in range(n_images):
        g, p = np.flatnonzero(gt.image == image), np.flatnonzero(pred.image == image)
        iou = pairwise_iou(gt.xyxy[g], pred.xyxy[p])
        for i, j in zip(*np.nonzero(iou >= floor), strict=True):
            pairs.add((int(g[i]), int(p[j]), float(iou[i, j])))
    return pairs


@pytest.mark.parametrize("seed", range(60))
def test_pruned_pairs_are_all_pairs_above_the_floor(seed: int) -> None:
    gt, pred, n_images = _tables(seed)
    for floor in FLOORS:
        got = candidate_pairs(gt, pred, n_images, floor, budget=1 + seed * 37)
        found = set(zip(got.gt.tolist(), got.pred.tolist(), got.iou.tolist(), strict=True))
        assert found == _slow(gt, pred, n_images, floor), f"floor {floor}"
        assert len(found) == len(got)  # no pair twice


@pytest.mark.parametrize("seed", range(40))
def test_evaluation_pairs_are_the_false_positives_from_the_floor_and_all_from_iou_min(seed: int) -> None:
    gt, pred, n_images = _tables(seed)
    pred = pred.with_columns(confidence=np.random.default_rng(seed).random(len(pred)))
    for iou_min, threshold in ((0.3, 0.0), (0.3, 0.4), (0.3, 0.8), (0.5, 0.95), (0.05, 0.8)):
        thresholds = Thresholds(iou_min, max(iou_min, 0.8), threshold)
        evaluation = evaluate(gt, pred, n_images, thresholds, budget=1 + seed * 37)
        false_positive = np.zeros(len(pred), dtype=bool)
        false_positive[evaluation.kept] = evaluation.outcomes.pred_outcome == Outcome.FALSE_POSITIVE
        got = evaluation.pairs
        found = set(zip(got.gt.tolist(), got.pred.tolist(), got.iou.tolist(), strict=True))
        floor = _slow(gt, pred, n_images, pair_floor(iou_min))
        expected = {(g, p, iou) for g, p, iou in floor if false_positive[p] or iou >= iou_min}
        assert found == expected, (iou_min, threshold)
        assert len(found) == len(got) and in_greedy_order(got)
