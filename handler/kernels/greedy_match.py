"""Greedy one-to-one matching over pairs in the greedy order, at many confidence thresholds in one
pass, in C (`src/greedy_match.c`)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from handler.kernels import I8, I64, SIZE, U32, kernel

# The thresholds one pass matches at: a bit each.
MAX_LEVELS = 32

_GREEDY_MATCH = kernel("greedy_match", I64, I64, I8, SIZE, SIZE, SIZE, U32, U32, U32)


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
    level = np.ones(n, dtype=np.int8) if level is None else np.ascontiguousarray(level, dtype=np.int8)
    gt_taken, pred_taken = np.zeros(n_gt, dtype=np.uint32), np.zeros(n_pred, dtype=np.uint32)
    taken = np.zeros(n, dtype=np.uint32)
    if n == 0:
        return taken
    done = _GREEDY_MATCH(gt, pred, level, n, n_gt, n_pred, gt_taken, pred_taken, taken)
    if done < 0:
        raise IndexError("a pair names a box outside its table")
    return taken
