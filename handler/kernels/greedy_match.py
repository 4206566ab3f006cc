"""Greedy one-to-one matching over pairs in the greedy order, at many confidence thresholds in one
pass, in C (`src/greedy_match.c`)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from handler.kernels import POINTER, SIZE, address, kernel

# The thresholds one pass matches at: a bit each.
MAX_LEVELS = 32


def taken_at(
    gt: npt.NDArray[np.int64],
    pred: npt.NDArray[np.int64],
    n_gt: int,
    n_pred: int,
    level: npt.NDArray[np.int8] | None = None,
) -> npt.NDArray[np.uint32]:
    """Per pair (already in the greedy order), the thresholds at which the greedy takes it, bit j
    for threshold j: the pairs taken one after the other while both boxes are free, a pair taking
    part at the thresholds below its `level` (its prediction's; None: at threshold 0 alone)."""
    n = len(gt)
    if not (len(pred) == n and (level is None or len(level) == n)):
        raise ValueError("a pair's columns must be equally long")
    # Bound to names: a converted copy must outlive the call that reads it.
    gt, pred = np.ascontiguousarray(gt, dtype=np.int64), np.ascontiguousarray(pred, dtype=np.int64)
    level = None if level is None else np.ascontiguousarray(level, dtype=np.int8)
    gt_taken, pred_taken = np.zeros(n_gt, dtype=np.uint32), np.zeros(n_pred, dtype=np.uint32)
    taken = np.zeros(n, dtype=np.uint32)
    if n == 0:
        return taken
    match = kernel("greedy_match", POINTER, POINTER, POINTER, SIZE, SIZE, SIZE, POINTER, POINTER, POINTER)
    done = match(
        address(gt, np.int64),
        address(pred, np.int64),
        None if level is None else address(level, np.int8),
        n,
        n_gt,
        n_pred,
        address(gt_taken, np.uint32) if n_gt else None,
        address(pred_taken, np.uint32) if n_pred else None,
        address(taken, np.uint32),
    )
    if done < 0:
        raise IndexError("a pair names a box outside its table")
    return taken
