"""Intersection over union of axis-aligned boxes, continuous coordinates (SPEC §5).

Every IoU of the engine goes through `iou_of_overlap`, so the candidate pairs (which compute
the overlap from columns) and `paired_iou` agree bit for bit: same float operations, same
order, GT box first.
"""

from __future__ import annotations

import numpy as np

from handler.boxes import FloatArray


def box_area(xyxy: FloatArray) -> FloatArray:
    """(N,) area of (N, 4) boxes, `(x_max - x_min) * (y_max - y_min)`."""
    return (xyxy[:, 2] - xyxy[:, 0]) * (xyxy[:, 3] - xyxy[:, 1])


def overlap(low_a: FloatArray, high_a: FloatArray, low_b: FloatArray, high_b: FloatArray) -> FloatArray:
    """Signed length of the overlap of two intervals (negative when they are apart)."""
    return np.minimum(high_a, high_b) - np.maximum(low_a, low_b)


def iou_of_overlap(
    width: FloatArray, height: FloatArray, area_a: FloatArray, area_b: FloatArray
) -> FloatArray:
    """IoU from the signed overlaps and the two areas; 0 where the union is 0."""
    intersection = np.maximum(width, 0.0) * np.maximum(height, 0.0)
    union = area_a + area_b - intersection
    iou = np.zeros(len(width), dtype=np.float64)
    np.divide(intersection, union, out=iou, where=union > 0)
    return iou


def paired_iou(a: FloatArray, b: FloatArray) -> FloatArray:
    """IoU of row i of `a` with row i of `b`.

    Args:
        a: (K, 4) boxes `[x_min, y_min, x_max, y_max]`.
        b: (K, 4) boxes, same layout.

    Returns:
        (K,) IoU; 0 where the union is 0 (two degenerate boxes).
    """
    width = overlap(a[:, 0], a[:, 2], b[:, 0], b[:, 2])
    height = overlap(a[:, 1], a[:, 3], b[:, 1], b[:, 3])
    return iou_of_overlap(width, height, box_area(a), box_area(b))


def pairwise_iou(a: FloatArray, b: FloatArray) -> FloatArray:
    """(N, M) IoU of every box of `a` (N, 4) with every box of `b` (M, 4); empty in, empty out."""
    rows = np.repeat(np.arange(len(a)), len(b))
    cols = np.tile(np.arange(len(b)), len(a))
    return paired_iou(a[rows], b[cols]).reshape(len(a), len(b))
