"""Intersection over union of axis-aligned boxes, continuous coordinates (SPEC §5)."""

from __future__ import annotations

import numpy as np

from handler.boxes import FloatArray


def paired_iou(a: FloatArray, b: FloatArray) -> FloatArray:
    """IoU of row i of `a` with row i of `b`.

    Args:
        a: (K, 4) boxes `[x_min, y_min, x_max, y_max]`.
        b: (K, 4) boxes, same layout.

    Returns:
        (K,) IoU; 0 where the union is 0 (two degenerate boxes).
    """
    width = np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0])
    height = np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1])
    intersection = np.clip(width, 0.0, None) * np.clip(height, 0.0, None)
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = area_a + area_b - intersection
    iou = np.zeros(len(a), dtype=np.float64)
    np.divide(intersection, union, out=iou, where=union > 0)
    return iou


def pairwise_iou(a: FloatArray, b: FloatArray) -> FloatArray:
    """(N, M) IoU of every box of `a` (N, 4) with every box of `b` (M, 4); empty in, empty out."""
    rows = np.repeat(np.arange(len(a)), len(b))
    cols = np.tile(np.arange(len(b)), len(a))
    return paired_iou(a[rows], b[cols]).reshape(len(a), len(b))
