"""The Python API on instance masks: records carrying mmdetection's (N, height, width) masks are
measured by mask IoU when both sides give them, by box IoU otherwise."""

from __future__ import annotations

import numpy as np
import pycocotools.mask as coco_mask

from handler import PrelabelingEfficiency


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
