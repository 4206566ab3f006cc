"""The confidence sweep: hand-computed, and equal to evaluating from scratch at every threshold."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from helpers.cases import THRESHOLDS, grid_tables, hand_case
from helpers.engine import confidence_sweep, match_boxes
from helpers.examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.inprocess import sweep_cost
from handler.boxes import BoxTable
from handler.engine import Thresholds, assign_outcomes, evaluate
from handler.engine.counts import OutcomeCounts
from handler.engine.outcomes import Tally
from handler.engine.sweep import SWEEP_GRID, sweep_thresholds
from handler.engine.timecost import TimeCosts


def test_grid_is_0_to_095_by_005_plus_the_used_threshold() -> None:
    assert SWEEP_GRID[:3] == (0.0, 0.05, 0.1) and SWEEP_GRID[-1] == 0.95 and len(SWEEP_GRID) == 20
    assert sweep_thresholds(0.5) == list(SWEEP_GRID)
    assert sweep_thresholds(0.33) == sorted([*SWEEP_GRID, 0.33])
    assert sweep_thresholds(1.0)[-1] == 1.0


def test_hand_case_sweep() -> None:
    gt, pred = hand_case()
    sweep = confidence_sweep(evaluate(gt, pred, 2, THRESHOLDS), THRESHOLDS)
    scores = {p.threshold: p.tally.score_fraction for p in sweep.points}
    # ≤ 0.2: P5 joins as a FP and P6 makes GT5 correct; ≤ 0.4: P6 only; each step above drops one box
    assert scores[0.0] == scores[0.2] == Fraction(6, 18)
    assert scores[0.25] == scores[0.4] == Fraction(6, 16)
    assert scores[0.45] == scores[0.5] == scores[0.6] == Fraction(4, 16)
    assert scores[0.65] == Fraction(4, 14) and scores[0.7] == Fraction(4, 12)
    assert scores[0.75] == scores[0.8] == Fraction(3, 12)
    assert scores[0.85] == scores[0.9] == Fraction(2, 12) and scores[0.95] == 0
    choice = sweep.choice(THRESHOLDS.confidence_threshold, TimeCosts())
    assert choice.used.threshold == 0.5 and choice.used.tally is not None
    seconds = {
        p.threshold: float(OutcomeCounts(p.tally.counts).labeler_seconds(TimeCosts())) for p in sweep.points
    }
    assert seconds[choice.best.threshold] == min(seconds.values())  # the best saves the most time
    assert choice.best.threshold == min(t for t, s in seconds.items() if s == min(seconds.values()))


def test_ties_keep_the_threshold_given() -> None:
    # one GT box and one perfect prediction: every threshold ties, so the used one is "best"
    one = BoxTable.build([[0, 0, 10, 10]], [0], [0])
    choice = confidence_sweep(evaluate(one, one, 1, THRESHOLDS), THRESHOLDS).choice(0.5, TimeCosts())
    assert choice.best is choice.used


def test_sweep_reuses_one_tally_per_distinct_kept_set() -> None:
    gt, pred = hand_case()
    sweep = confidence_sweep(evaluate(gt, pred, 2, THRESHOLDS), THRESHOLDS)
    tallies = {id(p.tally) for p in sweep.points}
    assert len(tallies) == len({p.predictions_kept for p in sweep.points}) == 8


@settings(max_examples=examples(80), deadline=None, derandomize=True, database=None)
@given(grid_tables(), st.sampled_from((0.1, 0.3, 0.5)), st.sampled_from((0.0, 0.33, 0.5, 1.0)))
def test_sweep_equals_evaluating_from_scratch_at_each_threshold(
    tables: tuple[BoxTable, BoxTable, int], iou_min: float, used: float
) -> None:
    gt, pred, n_images = tables
    thresholds = Thresholds(iou_min, 0.8, used)
    sweep = confidence_sweep(evaluate(gt, pred, n_images, thresholds, budget=5), thresholds)
    assert [p.threshold for p in sweep.points] == sweep_thresholds(used)
    for point in sweep.points:
        kept = pred[pred.confidence >= point.threshold]
        outcomes = assign_outcomes(gt, kept, match_boxes(gt, kept, n_images, iou_min), 0.8)
        scratch = Tally.of(outcomes)
        assert point.tally.count_dict() == scratch.count_dict(), point.threshold
        assert point.tally.same_class_iou == scratch.same_class_iou
        assert point.predictions_kept == len(kept)
    fewest = min(float(OutcomeCounts(p.tally.counts).labeler_seconds(TimeCosts())) for p in sweep.points)
    best = sweep.choice(used, TimeCosts()).best
    assert float(OutcomeCounts(best.tally.counts).labeler_seconds(TimeCosts())) == fewest


def test_sweep_cost_times_the_steps_separately() -> None:
    rng = np.random.default_rng(0)
    corners = rng.uniform(0, 90, (400, 2))
    gt = BoxTable.build(np.hstack([corners, corners + 10]), rng.integers(0, 3, 400), rng.integers(0, 20, 400))
    pred = gt.with_columns(xyxy=gt.xyxy + rng.normal(0, 2, gt.xyxy.shape), confidence=rng.uniform(0, 1, 400))
    cost = sweep_cost(gt, pred, 20, THRESHOLDS)
    assert cost.pairs >= 300 and min(cost.candidate_pairs, cost.evaluation, cost.sweep) > 0
