"""The per-class routing policy against a brute force over thresholds, on small random data."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.examples import examples
from helpers.reference import GtBox, PredBox, RefImage
from helpers.routing_reference import brute_force_seconds, class_counts
from hypothesis import given, settings
from hypothesis import strategies as st

from handler.boxes import BoxTable
from handler.engine import evaluate
from handler.engine.counts import OutcomeCounts
from handler.engine.evaluation import Thresholds
from handler.engine.routing import DRAW, MIN_CLASS_BOXES, route
from handler.engine.sweep import class_sweep, sweep_thresholds
from handler.engine.timecost import TimeCosts

THRESHOLDS = Thresholds(iou_min=0.3, iou_perfect=0.8, confidence_threshold=0.5)
N_CLASSES = 3


def _random_case(seed: int, n_images: int) -> tuple[BoxTable, BoxTable, list[RefImage]]:
    """GT boxes, predictions near some of them (jittered, sometimes another class) and invented ones."""
    rng = np.random.default_rng(seed)
    n_gt = n_images * 6
    corners = rng.uniform(0, 200, (n_gt, 2))
    gt_xyxy = np.hstack([corners, corners + rng.uniform(10, 50, (n_gt, 2))])
    gt_class = rng.integers(0, N_CLASSES, n_gt)
    gt_image = rng.integers(0, n_images, n_gt)
    source = rng.integers(0, n_gt, n_gt)
    invented = rng.uniform(0, 200, (n_gt // 2, 2))
    pred_xyxy = np.vstack(
        [gt_xyxy[source] + rng.normal(0, 4, (n_gt, 4)), np.hstack([invented, invented + 20])]
    )
    pred_class = np.concatenate(
        [
            np.where(rng.random(n_gt) < 0.8, gt_class[source], rng.integers(0, 3, n_gt)),
            rng.integers(0, N_CLASSES, n_gt // 2),
        ]
    )
    pred_image = np.concatenate([gt_image[source], rng.integers(0, n_images, n_gt // 2)])
    # a class whose invented boxes are confident makes "draw" or a high threshold worth it
    confidence = np.round(rng.uniform(0, 1, len(pred_class)), 2)
    confidence[n_gt:][pred_class[n_gt:] == 2] = 0.97
    gt = BoxTable.build(gt_xyxy, gt_class, gt_image)
    pred = BoxTable.build(pred_xyxy, pred_class, pred_image, confidence=confidence)
    images = [
        RefImage(
            tuple(GtBox(tuple(gt_xyxy[i].tolist()), int(gt_class[i])) for i in np.flatnonzero(gt_image == k)),
            tuple(
                PredBox(tuple(pred_xyxy[i].tolist()), int(pred_class[i]), float(confidence[i]))
                for i in np.flatnonzero(pred_image == k)
            ),
        )
        for k in range(n_images)
    ]
    return gt, pred, images


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_policy_is_the_brute_force_optimum(seed: int) -> None:
    gt, pred, images = _random_case(seed, n_images=12)
    costs = TimeCosts()
    evaluation = evaluate(gt, pred, len(images), THRESHOLDS)
    _, counts = class_sweep(evaluation, THRESHOLDS, N_CLASSES)
    thresholds = sweep_thresholds(THRESHOLDS.confidence_threshold)
    reference = [
        class_counts(images, N_CLASSES, t, THRESHOLDS.iou_min, THRESHOLDS.iou_perfect) for t in thresholds
    ]
    assert counts.transpose(1, 0, 2).tolist() == [[list(row) for row in rows] for rows in reference]
    used = thresholds.index(THRESHOLDS.confidence_threshold)
    policy = route(counts, used, costs)
    single = policy.best_single
    fixed = {c: single for c in range(N_CLASSES) if sum(reference[single][c]) < MIN_CLASS_BOXES}
    optimum = brute_force_seconds(reference, fixed, costs.per_outcome().tolist())
    assert float(policy.seconds.sum()) == pytest.approx(optimum)
    assert float(policy.seconds.sum()) <= float(policy.best_single_seconds.sum())
    assert int(policy.counts.sum()) <= int(counts[:, used].sum()) + int(counts[:, 0].sum())


def test_confident_invented_class_is_drawn_and_a_small_class_keeps_the_single_threshold() -> None:
    gt, pred, images = _random_case(5, n_images=30)
    evaluation = evaluate(gt, pred, len(images), THRESHOLDS)
    _, counts = class_sweep(evaluation, THRESHOLDS, N_CLASSES)
    used = sweep_thresholds(THRESHOLDS.confidence_threshold).index(THRESHOLDS.confidence_threshold)
    policy = route(counts, used, TimeCosts(delete=30.0))  # deleting costs more than drawing
    assert policy.choice[2] == DRAW and not policy.guarded[2]
    small = counts.copy()
    small[2] = np.minimum(small[2], 1)  # at most 5 boxes: below MIN_CLASS_BOXES
    guarded = route(small, used, TimeCosts(delete=30.0))
    assert guarded.guarded[2] and guarded.choice[2] == guarded.best_single
    assert guarded.seconds[2] == guarded.best_single_seconds[2]


@settings(max_examples=examples(100), deadline=None)
@given(
    st.integers(1, 6),
    st.integers(1, 8),
    st.integers(0, 2**32 - 1),
    st.tuples(*(st.floats(0.5, 40.0) for _ in range(5))),
)
def test_the_recommendation_never_costs_more_than_any_single_threshold(
    n_classes: int, n_thresholds: int, seed: int, seconds: tuple[float, ...]
) -> None:
    """By construction: whatever the counts and the seconds per action, the policy's labeler
    seconds are at most those of every sweep column, the best single threshold's included."""
    rng = np.random.default_rng(seed)
    gt = rng.integers(0, 60, n_classes)
    counts = np.zeros((n_classes, n_thresholds, 5), dtype=np.int64)
    for c in range(n_classes):  # per column, the GT boxes split over four outcomes, plus FPs
        split = rng.multinomial(gt[c], [0.4, 0.2, 0.1, 0.3], size=n_thresholds)
        counts[c, :, [0, 1, 2, 4]] = split.T
        counts[c, :, 3] = rng.integers(0, 80, n_thresholds)
    costs = TimeCosts(*seconds)
    used = int(rng.integers(0, n_thresholds))
    policy = route(counts, used, costs)
    by_column = OutcomeCounts(counts).labeler_seconds(costs).sum(axis=0)
    assert float(policy.seconds.sum()) <= float(by_column.min()) + 1e-6
    assert float(policy.best_single_seconds.sum()) == pytest.approx(float(by_column.min()))
