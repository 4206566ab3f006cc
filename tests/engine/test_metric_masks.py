"""The Python API on instance masks: records carrying mmdetection's (N, height, width) masks are
measured by mask IoU when both sides give them, by box IoU otherwise."""

from __future__ import annotations

import numpy as np
import pycocotools.mask as coco_mask
import pytest
from helpers.coco_masks import CONFIDENCE, IOU_MIN, IOU_PERFECT, coco_pair, mask_records, oracle

from handler import PrelabelingEfficiency, load_records


def _square() -> np.ndarray:
    mask = np.zeros((1, 20, 30), dtype=bool)
    mask[0, 5:15, 10:20] = True
    return mask


def test_masks_decide_where_the_boxes_cannot_tell() -> None:
    """A checkerboard of the square has the square's box (box IoU 1: correct) and half its pixels
    (mask IoU 0.5, as pycocotools says: shifted)."""
    square = _square()
    checkers = square & (np.indices(square.shape[1:]).sum(axis=0) % 2 == 0)[None]
    box = [[10.0, 5.0, 20.0, 15.0]]
    encoded = [coco_mask.encode(np.asfortranarray(m.astype(np.uint8))) for m in (square[0], checkers[0])]
    assert coco_mask.iou([encoded[1]], [encoded[0]], [0])[0][0] == 0.5
    metric = PrelabelingEfficiency()
    gt = [{"bboxes": box, "labels": ["cat"], "masks": square}]
    prediction = {"bboxes": box, "labels": ["cat"], "scores": [0.9], "masks": checkers}
    on_masks = metric(predictions=[prediction], groundtruths=gt)
    assert on_masks.counts.shifted == 1 and on_masks.counts.correct == 0
    on_boxes = metric(predictions=[{"bboxes": box, "labels": ["cat"], "scores": [0.9]}], groundtruths=gt)
    assert on_boxes.counts.correct == 1


def test_the_coco_pair_s_rle_masks_score_as_pycocotools() -> None:
    """mmdetection's results carry masks as COCO RLE dicts: the COCO val2014 pair given so scores
    0.30 with the oracle's counts (pycocotools' mask IoU, the contract's greedy)."""
    gt_path, masks_path, _ = coco_pair()
    expected = oracle(gt_path, masks_path)
    gts, predictions = mask_records(gt_path, masks_path)
    result = PrelabelingEfficiency(iou_min=IOU_MIN, iou_perfect=IOU_PERFECT, confidence_threshold=CONFIDENCE)(
        predictions=predictions, groundtruths=gts
    )
    assert result.counts.outcomes() == {
        k: v for k, v in expected.counts.items() if k in result.counts.outcomes()
    }
    assert result.assistance_score == float(expected.score) and round(result.assistance_score, 2) == 0.30
    assert result.efficiency_level == expected.grade == "Minimal assist"
    assert result.time.shape == "masks" and result.time.costs_seconds.draw == 79.2


def test_an_unreadable_rle_mask_is_a_value_error_naming_it() -> None:
    box = [[10.0, 5.0, 20.0, 15.0]]
    good = coco_mask.encode(np.asfortranarray(_square()[0].astype(np.uint8)))
    short = {"size": [20, 30], "counts": [5, 10]}
    gt = [{"bboxes": box, "labels": ["cat"], "masks": [good]}]
    with pytest.raises(ValueError, match=r"predictions\[0\]\['masks'\]\[0\].*RLE"):
        PrelabelingEfficiency()(
            predictions=[{"bboxes": box, "labels": ["cat"], "masks": [short]}], groundtruths=gt
        )


def test_evaluate_reads_the_coco_pair_s_masks_as_the_node_does() -> None:
    """`evaluate` of the two files scores their masks (the node's pairing) and prices a mask's seconds."""
    gt_path, masks_path, _ = coco_pair()
    expected = oracle(gt_path, masks_path)
    result = PrelabelingEfficiency(
        iou_min=IOU_MIN, iou_perfect=IOU_PERFECT, confidence_threshold=CONFIDENCE
    ).evaluate(str(gt_path), str(masks_path))
    assert result.assistance_score == float(expected.score)
    assert result.time.shape == "masks" and result.time.costs_seconds.nudge == 26.4


def test_records_loaded_from_mask_files_carry_their_masks() -> None:
    """`load_records` of the COCO pair gives each record its masks (RLE dicts), so the records
    score what `evaluate` of the files scores."""
    gt_path, masks_path, _ = coco_pair()
    records = load_records(str(gt_path), str(masks_path))
    assert all(len(r["masks"]) == len(r["bboxes"]) for r in records.groundtruths + records.predictions)
    metric = PrelabelingEfficiency(iou_min=IOU_MIN, iou_perfect=IOU_PERFECT, confidence_threshold=CONFIDENCE)
    from_records = metric(predictions=records.predictions, groundtruths=records.groundtruths)
    assert from_records == metric.evaluate(str(gt_path), str(masks_path))
    assert from_records.assistance_score == float(oracle(gt_path, masks_path).score)
