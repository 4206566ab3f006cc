"""The analyses beyond the seed, on one small hand-computed case, and the restructured engine.

The case (IOU_MIN 0.3, IOU_PERFECT 0.8, threshold 0.5), classes car 0, dog 1, cat 2:

image 0  GT0 car  [0,0,10,10]     P0 car [0,0,10,10]    0.9   IoU 1     -> correct
         GT1 car  [20,20,30,30]   P1 car [20,20,30,35]  0.8   IoU 2/3   -> shifted
         GT2 dog  [40,40,50,50]   P2 cat [40,40,50,50]  0.7   IoU 1     -> class-confused (dog -> cat)
         GT3 car  [60,60,70,70]   P3 car [60,60,70,62.5] 0.65 IoU 0.25  -> FP (a near miss) and GT3 FN
         GT4 dog  [80,80,90,90]   P4 car [200,...]      0.6             -> FP, GT4 FN
                                  P5 car [0,0,10,10]    0.2             -> dropped
image 1  GT5 cat  [0,0,100,100]   P6 cat [0,0,100,100]  0.4             -> dropped, GT5 FN
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.cases import CAR, CAT, DOG, THRESHOLDS, grid_tables, hand_case
from helpers.engine import match_boxes
from helpers.examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from handler.boxes import BoxTable
from handler.engine import Outcome, Thresholds, assign_outcomes, evaluate
from handler.engine import breakdowns as an
from handler.engine.analyses.confusions import confusion_pairs, top_confusions
from handler.engine.analyses.near_misses import band_edges, count_near_misses
from handler.engine.counts import OutcomeCounts
from handler.engine.evaluation import Evaluation
from handler.engine.outcomes import Tally
from handler.engine.timecost import ACTIONS, TimeCosts
from handler.features.work.partial import counts_by_size, size_bucket


@pytest.fixture
def evaluation() -> Evaluation:
    gt, pred = hand_case()
    return evaluate(gt, pred, 2, THRESHOLDS)


def test_the_hand_case_outcomes(evaluation: Evaluation) -> None:
    assert evaluation.tally.count_dict() == {
        "correct": 1,
        "shifted": 1,
        "class_confused": 1,
        "false_positive": 2,
        "false_negative": 3,
        "total": 8,
    }
    assert evaluation.tally.assistance_score == 0.25
    # pairs were computed once, over all seven predictions and down to IoU 0.1 for the false
    # positives (P3-GT3 at 0.25 is in)
    assert len(evaluation.all_pred) == 7 and 0.25 in evaluation.pairs.iou.tolist()


def test_per_class_counts_fp_by_predicted_class_and_the_rest_by_gt_class(evaluation: Evaluation) -> None:
    counts = an.counts_by_class(evaluation, 3)
    assert counts.tolist() == [[1, 1, 0, 2, 1], [0, 0, 1, 0, 1], [0, 0, 0, 0, 1]]
    assert OutcomeCounts(counts).scores.tolist() == [0.3, 0.25, 0.0]
    # seconds left: car 1.8 + 6 + 2·2 + 25.5 = 37.3, dog 4 + 25.5 = 29.5, cat 25.5
    seconds = OutcomeCounts(counts).labeler_seconds(TimeCosts())
    assert an.most_time_left_first(counts, seconds).tolist() == [CAR, DOG, CAT]
    assert counts.sum(axis=0).tolist() == evaluation.tally.counts.tolist()


def test_most_time_left_breaks_ties_by_lowest_score_then_row_and_skips_empty_rows() -> None:
    # rows 0, 1 and 4 each leave 25.5 s (one draw; 17 accepts of 1.5 s); row 3 leaves 2 s; row 2 is empty
    counts = np.array([[0, 0, 0, 0, 1], [17, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1]])
    seconds = OutcomeCounts(counts).labeler_seconds(TimeCosts(accept=1.5))
    assert an.most_time_left_first(counts, seconds).tolist() == [0, 4, 1, 3]


def test_confusions_gt_to_predicted_most_frequent_first(evaluation: Evaluation) -> None:
    found = top_confusions(confusion_pairs(evaluation), top=10)
    assert (found.gt_class.tolist(), found.pred_class.tolist(), found.count.tolist()) == ([DOG], [CAT], [1])


def test_confusions_order_and_top() -> None:
    # three images, each a perfect box with a wrong class: dog->cat twice, car->dog once
    gt = BoxTable.build([[0, 0, 10, 10]] * 3, [DOG, CAR, DOG], [0, 1, 2])
    pred = BoxTable.build([[0, 0, 10, 10]] * 3, [CAT, DOG, CAT], [0, 1, 2])
    found = top_confusions(confusion_pairs(evaluate(gt, pred, 3, THRESHOLDS)), top=1)
    assert (found.gt_class.tolist(), found.pred_class.tolist(), found.count.tolist()) == ([DOG], [CAT], [2])


def test_per_image_and_most_work(evaluation: Evaluation) -> None:
    counts = an.counts_by_image(evaluation, 2)
    assert counts.tolist() == [[1, 1, 1, 2, 2], [0, 0, 0, 0, 1]]
    seconds = OutcomeCounts(counts).labeler_seconds(TimeCosts())
    assert seconds.tolist() == [1.8 + 6 + 4 + 2 * 2 + 2 * 25.5, 25.5]
    assert an.most_work(seconds, 10).tolist() == [0, 1]
    assert an.most_work(seconds, 1).tolist() == [0]
    assert an.most_work(np.array([0.0, 3.0, 3.0, 5.0]), 10).tolist() == [3, 1, 2]  # no work, no row


def test_by_size_uses_gt_area_and_a_false_positive_its_own(evaluation: Evaluation) -> None:
    counts = counts_by_size(evaluation, np.ones(2))
    assert counts.tolist() == [[1, 1, 1, 2, 2], [0, 0, 0, 0, 0], [0, 0, 0, 0, 1]]
    # the same boxes in 0-1 units on 100 x 100 images: the scale brings back the pixel areas
    scale = np.full(2, 100.0 * 100.0)
    gt, pred = hand_case()
    gt, pred = gt.with_columns(xyxy=gt.xyxy / 100), pred.with_columns(xyxy=pred.xyxy / 100)
    shrunk = evaluate(gt, pred, 2, THRESHOLDS)
    assert counts_by_size(shrunk, scale).tolist() == counts.tolist()


def test_size_bounds_are_coco_areas() -> None:
    xyxy = [[0, 0, 32, 31.9], [0, 0, 32, 32], [0, 0, 96, 95.9], [0, 0, 96, 96]]
    boxes = BoxTable.build(xyxy, [0] * 4, [0] * 4)
    assert size_bucket(boxes, np.ones(1)).tolist() == [0, 1, 1, 2]


def test_near_misses_count_false_positives_on_missed_boxes_of_their_class(evaluation: Evaluation) -> None:
    found = count_near_misses(evaluation, 0.1, 0.3)
    assert found.edges.tolist() == [0.1, 0.2, 0.3]
    assert found.counts.tolist() == [0, 1] and found.count == 1 and found.missed_gt == 1


def test_near_misses_ignore_other_classes_matched_boxes_and_dropped_predictions() -> None:
    gt = BoxTable.build([[0, 0, 10, 10], [20, 0, 30, 10]], [CAR, CAR], [0, 0])
    pred = BoxTable.build(
        [[0, 0, 10, 2.5], [0, 0, 10, 1.5], [20, 0, 30, 10], [20, 0, 30, 2.5], [0, 0, 10, 2]],
        [DOG, CAR, CAR, CAR, CAR],
        [0, 0, 0, 0, 0],
        confidence=[0.9, 0.9, 0.9, 0.9, 0.1],
    )
    evaluation = evaluate(gt, pred, 1, THRESHOLDS)
    found = count_near_misses(evaluation, 0.1, 0.3)
    # P0 is another class, P3 overlaps a matched box, P4 was dropped: only P1 (IoU 0.15) is a near miss
    assert found.counts.tolist() == [1, 0] and found.missed_gt == 1


def test_one_false_positive_counts_once_at_its_best_overlap() -> None:
    gt = BoxTable.build([[0, 0, 10, 10], [0, 0, 10, 20]], [CAR, CAR], [0, 0])
    pred = BoxTable.build([[0, 0, 10, 2.5]], [CAR], [0])  # IoU 0.25 and 0.125
    found = count_near_misses(evaluate(gt, pred, 1, THRESHOLDS), 0.1, 0.3)
    assert found.counts.tolist() == [0, 1] and found.missed_gt == 2


@pytest.mark.parametrize(
    ("iou_min", "edges"),
    [
        (0.1, [0.1]),
        (0.2, [0.1, 0.2]),
        (0.3, [0.1, 0.2, 0.3]),
        (0.5, [0.1, 0.2, 0.3, 0.4, 0.5]),
        (0.25, [0.1, 0.2, 0.25]),
        (0.05, [0.1]),
    ],
)
def test_band_edges(iou_min: float, edges: list[float]) -> None:
    assert band_edges(0.1, iou_min).tolist() == edges


def test_time_estimate_from_the_action_costs(evaluation: Evaluation) -> None:
    estimate = OutcomeCounts(evaluation.tally.counts).time_estimate(TimeCosts())
    assert estimate.with_predictions == 1.8 + 6 + 4 + 2 * 2 + 3 * 25.5
    assert estimate.from_scratch == 6 * 25.5  # every GT box drawn
    assert estimate.saved == estimate.from_scratch - estimate.with_predictions
    assert estimate.saved_share == pytest.approx(estimate.saved / (6 * 25.5))
    costly = OutcomeCounts(evaluation.tally.counts).time_estimate(TimeCosts(delete=100))
    assert costly.saved < 0 and costly.saved_share < 0  # predictions can cost time
    assert OutcomeCounts(np.zeros(5, dtype=np.int64)).time_estimate(TimeCosts()).saved_share == 0.0


def test_time_costs_follow_the_outcome_order_and_are_checked() -> None:
    assert TimeCosts(accept=1, nudge=2, relabel=3, delete=4, draw=5).per_outcome().tolist() == [1, 2, 3, 4, 5]
    assert list(TimeCosts().to_dict()) == list(ACTIONS)
    assert ACTIONS[Outcome.FALSE_NEGATIVE] == "draw" and ACTIONS[Outcome.FALSE_POSITIVE] == "delete"
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="Expected the nudge time cost in seconds"):
            TimeCosts(nudge=bad)


def test_an_empty_evaluation_gives_empty_figures() -> None:
    empty = evaluate(BoxTable.empty(), BoxTable.empty(), 0, THRESHOLDS)
    assert an.counts_by_class(empty, 0).shape == (0, 5)
    assert an.most_time_left_first(an.counts_by_class(empty, 3), np.zeros(3)).tolist() == []
    assert top_confusions(confusion_pairs(empty), 10).count.tolist() == []
    assert count_near_misses(empty, 0.1, 0.3).count == 0
    assert counts_by_size(empty, np.ones(0)).sum() == 0


# ---------------------------------------------------------------------------------------
# The restructured evaluate() equals matching the kept predictions from scratch
# ---------------------------------------------------------------------------------------


@settings(max_examples=examples(100), deadline=None, derandomize=True, database=None)
@given(grid_tables(), st.sampled_from((0.1, 0.2, 0.3, 0.5)), st.sampled_from((0.0, 0.25, 0.5, 1.0)))
def test_evaluate_equals_matching_the_kept_predictions(
    tables: tuple[BoxTable, BoxTable, int], iou_min: float, threshold: float
) -> None:
    gt, pred, n_images = tables
    thresholds = Thresholds(iou_min, 0.8, threshold)
    kept = pred[pred.confidence >= threshold]
    match = match_boxes(gt, kept, n_images, iou_min)
    expected = assign_outcomes(gt, kept, match, 0.8)
    for budget in (1, 7, 4_000_000):
        got = evaluate(gt, pred, n_images, thresholds, budget)
        assert got.outcomes.gt_outcome.tolist() == expected.gt_outcome.tolist()
        assert got.outcomes.pred_outcome.tolist() == expected.pred_outcome.tolist()
        assert got.outcomes.match.gt_match.tolist() == match.gt_match.tolist()
        assert got.tally.count_dict() == Tally.of(expected).count_dict()
