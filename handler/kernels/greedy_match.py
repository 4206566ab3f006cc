"""Greedy one-to-one matching over pairs in the greedy order, in C (`src/greedy_match.c`)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from handler.kernels import POINTER, SIZE, address, kernel

Matches = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]


def greedy_matches(
    gt: npt.NDArray[np.int64],
    pred: npt.NDArray[np.int64],
    iou: npt.NDArray[np.float64],
    n_gt: int,
    n_pred: int,
    level: npt.NDArray[np.int8] | None = None,
    above: int = 0,
) -> Matches:
    """Per GT box its prediction, per prediction its GT box (-1: none) and the pair's IoU (NaN:
    none), taking the pairs (already in the greedy order) one after the other while both boxes are
    free; with `level`, only the pairs whose level is above `above`."""
    n = len(iou)
    if not (len(gt) == len(pred) == n and (level is None or len(level) == n)):
        raise ValueError("a pair's columns must be equally long")
    gt_match = np.full(n_gt, -1, dtype=np.int64)
    pred_match = np.full(n_pred, -1, dtype=np.int64)
    pred_iou = np.full(n_pred, np.nan)
    if n == 0:
        return gt_match, pred_match, pred_iou
    # Bound to names: a converted copy must outlive the call that reads it.
    gt, pred = np.ascontiguousarray(gt, dtype=np.int64), np.ascontiguousarray(pred, dtype=np.int64)
    iou = np.ascontiguousarray(iou, dtype=np.float64)
    level = None if level is None else np.ascontiguousarray(level, dtype=np.int8)
    match = kernel(
        "greedy_match", POINTER, POINTER, POINTER, POINTER, SIZE, SIZE, SIZE, SIZE, POINTER, POINTER, POINTER
    )
    taken = match(
        address(gt, np.int64),
        address(pred, np.int64),
        address(iou, np.float64),
        None if level is None else address(level, np.int8),
        above,
        n,
        n_gt,
        n_pred,
        address(gt_match, np.int64),
        address(pred_match, np.int64),
        address(pred_iou, np.float64),
    )
    if taken < 0:
        raise IndexError("a pair names a box outside its table")
    return gt_match, pred_match, pred_iou
