"""Intersection over union, continuous coordinates (contract §5).

Every IoU of the engine goes through `iou_of_intersection` (axis-aligned boxes through
`iou_of_overlap`), and the candidate pairs' kernel (`kernels/src/window_pairs.c`) does these same
float operations in the same order, GT box first (`tests/kernels/test_window_pairs.py` holds it to
them bit for bit), so every IoU agrees. Rotated boxes give their intersection from `rotated.py`.
"""

from __future__ import annotations

import numpy as np

from handler.boxes import FloatArray


def overlap(low_a: FloatArray, high_a: FloatArray, low_b: FloatArray, high_b: FloatArray) -> FloatArray:
    """Signed length of the overlap of two intervals (negative when they are apart)."""
    length: FloatArray = np.minimum(high_a, high_b) - np.maximum(low_a, low_b)
    return length


def iou_of_overlap(
    width: FloatArray, height: FloatArray, area_a: FloatArray, area_b: FloatArray
) -> FloatArray:
    """IoU from the signed overlaps and the two areas; 0 where the union is 0."""
    return iou_of_intersection(np.maximum(width, 0.0) * np.maximum(height, 0.0), area_a, area_b)


def iou_of_intersection(intersection: FloatArray, area_a: FloatArray, area_b: FloatArray) -> FloatArray:
    """IoU from the area of the intersection and the two areas; 0 where the union is 0."""
    union = area_a + area_b - intersection
    iou = np.zeros(len(intersection), dtype=np.float64)
    np.divide(intersection, union, out=iou, where=union > 0)
    return iou
