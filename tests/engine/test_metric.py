"""The Python API: add / compute / reset, the stateless call, and exact merging of shards."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.paths import EXAMPLES, THIRD_PARTY

from handler import PrelabelingEfficiency, compare
from handler.inputs import parse_inputs
from handler.metric import load_records
from handler.pipeline import run
from handler.storage import open_store

COCO = THIRD_PARTY / "coco_val2014_100"
VOC = THIRD_PARTY / "voc_padilla_100"
CARTUCHO = THIRD_PARTY / "cartucho_mAP_85" / "input"


def random_images(seed: int, count: int) -> tuple[list[dict[str, np.ndarray]], list[dict[str, np.ndarray]]]:
    rng = np.random.default_rng(seed)
    predictions, groundtruths = [], []
    for _ in range(count):
        n_gt = int(rng.integers(0, 6))
        gt = rng.uniform(0, 80, (n_gt, 2))
        gt_boxes = np.concatenate([gt, gt + rng.uniform(5, 20, (n_gt, 2))], axis=1)
        moved = gt_boxes + rng.normal(0, 2, gt_boxes.shape)
        # Corners kept in order: a swapped box would be skipped, as the readers skip one.
        jitter = np.concatenate(
            [np.minimum(moved[:, :2], moved[:, 2:]), np.maximum(moved[:, :2], moved[:, 2:])], axis=1
        )
        extra = rng.uniform(0, 80, (int(rng.integers(0, 3)), 2))
        pred_boxes = np.concatenate([jitter, np.concatenate([extra, extra + 10], axis=1)])
        groundtruths.append({"bboxes": gt_boxes, "labels": rng.integers(0, 3, n_gt)})
        predictions.append(
            {
                "bboxes": pred_boxes,
                "labels": rng.integers(0, 3, len(pred_boxes)),
                "scores": rng.uniform(0, 1, len(pred_boxes)),
            }
        )
    return predictions, groundtruths


def test_hand_computed_case() -> None:
    metric = PrelabelingEfficiency(iou_min=0.3, iou_perfect=0.8, confidence_threshold=0.5)
    metric.add(
        predictions=[
            {
                "bboxes": [[0, 0, 10, 10], [20, 20, 30, 25], [50, 50, 60, 60]],
                "labels": ["cat", "dog", "cat"],
                "scores": [0.9, 0.8, 0.7],
            },
            {"bboxes": [[0, 0, 10, 10]], "labels": ["cat"], "scores": [0.4]},
        ],
        groundtruths=[
            {"bboxes": [[0, 0, 10, 10], [20, 20, 30, 30]], "labels": ["cat", "dog"]},
            {"bboxes": [[0, 0, 10, 10]], "labels": ["cat"]},
        ],
    )
    result = metric.compute()
    # image 0: exact cat (correct), dog at IoU 0.5 (shifted), stray cat (FP); image 1: dropped, FN.
    assert result.counts.model_dump() == {
        "correct": 1,
        "shifted": 1,
        "class_confused": 0,
        "false_positive": 1,
        "false_negative": 1,
        "total": 4,
    }
    assert result.assistance_score == 0.375 and result.efficiency_level == "Partial assist"
    assert result.mean_iou == 0.75
    assert "Partial assist" in str(result) and result.to_dict()["counts"]["total"] == 4


def test_batches_merge_and_one_shot_agree_exactly() -> None:
    predictions, groundtruths = random_images(seed=3, count=300)
    one_shot = PrelabelingEfficiency()(predictions=predictions, groundtruths=groundtruths)
    batched = PrelabelingEfficiency()
    for start in range(0, 300, 32):
        batched.add(predictions[start : start + 32], groundtruths[start : start + 32])
    shard_a, shard_b = PrelabelingEfficiency(), PrelabelingEfficiency()
    shard_a.add(predictions[:170], groundtruths[:170])
    shard_b.add(predictions[170:], groundtruths[170:])
    assert batched.compute() == one_shot
    assert shard_b.merge(shard_a).compute() == one_shot  # order of merging does not matter
    assert one_shot.counts.total > 500


def test_stateless_call_leaves_state_alone_and_reset_clears() -> None:
    predictions, groundtruths = random_images(seed=5, count=10)
    metric = PrelabelingEfficiency()
    metric.add(predictions, groundtruths)
    before = metric.compute()
    metric(predictions=predictions[:3], groundtruths=groundtruths[:3])
    assert metric.compute() == before
    metric.reset()
    assert metric.compute().counts.total == 0 and metric.compute().efficiency_level == "Minimal assist"


def test_merge_refuses_other_kinds_and_thresholds() -> None:
    with pytest.raises(ValueError, match="Expected metrics with equal thresholds"):
        PrelabelingEfficiency(iou_min=0.3).merge(PrelabelingEfficiency(iou_min=0.5))
    with pytest.raises(TypeError, match="Expected a PrelabelingEfficiency but got dict"):
        PrelabelingEfficiency().merge({})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"iou_min": 0.0}, "Expected iou_min to be one of 0.10, 0.20, 0.30, 0.40, 0.50 but got 0.0"),
        ({"iou_min": 0.35}, "Expected iou_min to be one of 0.10, 0.20, 0.30, 0.40, 0.50 but got 0.35"),
        ({"iou_perfect": 1.0}, "Expected iou_perfect to be one of 0.60, 0.70, 0.80, 0.90, 0.95 but got 1.0"),
        ({"confidence_threshold": 1.5}, "Expected `confidence_threshold` in [0, 1]"),
    ],
)
def test_arguments_are_checked_up_front(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=None) as caught:
        PrelabelingEfficiency(**kwargs)
    assert message in str(caught.value)


def test_mismatched_batch_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="as many prediction records as groundtruth records"):
        PrelabelingEfficiency().add([], [{"bboxes": [], "labels": []}])


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"bboxes": [1, 2, 3], "labels": ["a"]}, "Expected predictions[0]['bboxes'] of shape (N, 4)"),
        ({"bboxes": [[0, 0, 1, 1, 5]], "labels": ["a"]}, "Expected predictions[0]['bboxes'] of shape (N, 4)"),
        (
            {"bboxes": [[0, 0, 1, 1]], "labels": ["a", "b"]},
            "Expected predictions[0]['labels'] of shape (1,), one per box, but got shape (2,)",
        ),
        (
            {"bboxes": [[0, 0, 1, 1]], "labels": ["a"], "scores": [[0.5]]},
            "Expected predictions[0]['scores'] of",
        ),
    ],
)
def test_wrongly_shaped_arrays_are_named(record: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=None) as caught:
        PrelabelingEfficiency().add([record], [{"bboxes": [], "labels": []}])
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("gt", "pred"),
    [
        (EXAMPLES / "gt.json", EXAMPLES / "predictions.jsonl"),
        (COCO / "instances_val2014_100.json", COCO / "instances_val2014_fakebbox100_results.json"),
        (VOC / "gts" / "pascalvoc_format", VOC / "dets" / "coco_format"),
        (CARTUCHO / "ground-truth", CARTUCHO / "detection-results"),
    ],
)
def test_load_records_feeds_add_the_same_counts_as_the_node(gt: Path, pred: Path, tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "store"))
    node = run(parse_inputs({"GT_DATASET": str(gt), "PRED_DATASET": str(pred)}), store).findings
    records = load_records(str(gt), str(pred), store=store)
    images = node.dataset.images
    assert len(records.predictions) == len(records.groundtruths) == len(records.asset_ids) == images > 0
    metric = PrelabelingEfficiency()
    metric.add(records.predictions, records.groundtruths)
    assert metric.compute().counts == node.counts
    assert PrelabelingEfficiency().evaluate(str(gt), str(pred), store=store).counts == node.counts


def test_a_crowded_record_is_skipped_with_a_warning(tmp_path: Path) -> None:
    """1,001 identical boxes a side on record 1: warned about by its position, and left out, so the
    tally is record 0's alone; through two files, the warning names the asset."""
    box = np.array([[10.0, 10.0, 50.0, 50.0]])
    plain = {"bboxes": box, "labels": np.array([0])}
    crowded = {"bboxes": np.repeat(box, 1001, axis=0), "labels": np.zeros(1001, dtype=int)}
    predictions = [{**plain, "scores": np.array([0.9])}, {**crowded, "scores": np.full(1001, 0.9)}]
    metric = PrelabelingEfficiency()
    with pytest.warns(UserWarning, match=r"^record 1: its boxes are on an image with more than 1,000,000"):
        result = metric(predictions=predictions, groundtruths=[plain, crowded])
    assert (result.counts.correct, result.counts.false_positive, result.counts.false_negative) == (1, 0, 0)
    native = {
        "assets": [
            {"asset_id": "plain.jpg", "annotations": [_box(0)]},
            {"asset_id": "crowded.jpg", "annotations": [_box(i) for i in range(1001)]},
        ]
    }
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps(native))
    with pytest.warns(UserWarning, match=r"^asset 'crowded.jpg': its boxes are on an image"):
        assert metric.evaluate(str(gt), str(gt)).counts.correct == 1


def _box(_: int) -> dict[str, object]:
    return {"label": "cell", "x_min": 10, "y_min": 10, "x_max": 50, "y_max": 50}


GT_RECORD = {"bboxes": [[0, 0, 10, 10]], "labels": ["a"]}


def _scored(**fields: object) -> object:
    prediction = {"bboxes": [[0, 0, 10, 10]], "labels": ["a"], "scores": [0.9], **fields}
    return PrelabelingEfficiency()(predictions=[GT_RECORD, prediction], groundtruths=[GT_RECORD, GT_RECORD])


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: _scored(bboxes=[["a", "b", "c", "d"]]),
            TypeError,
            "predictions[1]['bboxes'] to hold real numbers",
        ),
        (
            lambda: _scored(bboxes=[[0, 0, 1], [0, 0, 1, 1]]),
            ValueError,
            "predictions[1]['bboxes'] to be an array",
        ),
        (lambda: _scored(bboxes=[[0, 0, 1 + 1j, 1]]), TypeError, "but got complex numbers"),
        (
            lambda: _scored(
                bboxes=[[0, 0, 1, 1], [0, 0, 2, 2]], labels=np.array(["a", 1], dtype=object), scores=[1, 1]
            ),
            TypeError,
            "predictions[1]['labels'] to be class names (strings) or integer ids, one kind",
        ),
        (
            lambda: _scored(labels=[1]),
            TypeError,
            "predictions[1]['labels'] to be class names like groundtruths[0]",
        ),
        (lambda: _scored(scores=["x"]), TypeError, "predictions[1]['scores'] to hold real numbers"),
        (lambda: PrelabelingEfficiency().add([5], [GT_RECORD]), TypeError, "predictions[0] to be a dict"),
        (lambda: PrelabelingEfficiency().add([{"labels": []}], [GT_RECORD]), ValueError, "the key 'bboxes'"),
        (lambda: PrelabelingEfficiency().add("ab", [GT_RECORD]), TypeError, "predictions to be a list"),
        (lambda: PrelabelingEfficiency(iou_min=None), TypeError, "iou_min to be a number but got None"),
        (lambda: PrelabelingEfficiency(iou_min="abc"), TypeError, "iou_min to be a number"),
        (lambda: PrelabelingEfficiency(confidence_threshold=None), TypeError, "confidence_threshold to be a"),
        (lambda: PrelabelingEfficiency(dataset_meta="x"), TypeError, "dataset_meta to be a dict"),
        (
            lambda: PrelabelingEfficiency(dataset_meta={"classes": 5}),
            TypeError,
            "dataset_meta['classes'] to be",
        ),
        (lambda: PrelabelingEfficiency(time_costs=5), TypeError, "time_costs to be a TimeCosts"),
        (lambda: load_records(None, "x"), TypeError, "gt_ref to be a string but got None"),
        (
            lambda: load_records("g", "p", pred_layout=5),
            TypeError,
            "pred_layout to be a string but got int 5",
        ),
        (lambda: compare(None, "a", "b"), TypeError, "gt to be a string but got None"),
        (
            lambda: compare("g", "a", "b", inputs={"IOU_MIN": 0.3}),
            TypeError,
            "inputs['IOU_MIN'] to be a string",
        ),
    ],
    ids=[
        "string boxes",
        "ragged boxes",
        "complex boxes",
        "object labels",
        "ids meet names",
        "string scores",
        "record not a dict",
        "no bboxes",
        "predictions a string",
        "iou_min None",
        "iou_min text",
        "confidence None",
        "meta a string",
        "classes a number",
        "time_costs a number",
        "reference None",
        "layout a number",
        "compare's GT None",
        "compare's input a number",
    ],
)
def test_a_bad_argument_is_one_error_naming_it(call: Any, error: type[Exception], message: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(error) as caught:
            call()
    assert str(caught.value).startswith("Expected ") and message in str(caught.value)


@pytest.mark.parametrize(
    ("box", "score", "reason"),
    [
        ([0, 0, 1e306, 1e306], 0.9, "box area past the float range"),
        ([0, 0, np.inf, 10], 0.9, "coordinate not finite"),
        ([10, 0, 0, 10], 0.9, "x_max < x_min"),
        ([0, 0, 10, 10], np.nan, "confidence not finite"),
        ([0, 0, 10, 10], 1.5, "confidence out of range"),
    ],
)
def test_a_box_the_engine_cannot_score_is_skipped_with_its_reason(
    box: list[float], score: float, reason: str
) -> None:
    """As the readers skip a row: the box left out, one UserWarning naming it; no numpy warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = _scored(bboxes=[box], scores=[score])
    assert [str(w.message) for w in caught] == [f"boxes skipped: predictions[1] box 0: {reason}"]
    assert (result.counts.correct, result.counts.false_negative) == (1, 1)
