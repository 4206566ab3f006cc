"""Each GT box's window of predictions, by x_min within its image, in C (`src/x_windows.c`)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from handler.kernels import F64, I64, SIZE, kernel

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

# The predictions, the GT's images and bounds, the images, then the outputs and their scratch.
_WINDOWS = kernel("x_windows", F64, I64, SIZE, I64, F64, F64, SIZE, SIZE, I64, I64, I64, F64, F64, I64, I64)


def x_windows(
    pred_x0: Floats, pred_image: Ints, gt_image: Ints, bounds: tuple[Floats, Floats], n_images: int
) -> tuple[Ints, Ints, Ints]:
    """The predictions ordered by (image, x_min, row), and for each GT box the positions [start,
    stop) of that order holding its image's predictions with bounds[0] ≤ x_min ≤ bounds[1]."""
    # Bound to names: a converted copy must outlive the call that reads it.
    x0 = np.ascontiguousarray(pred_x0, dtype=np.float64)
    pred_image = np.ascontiguousarray(pred_image, dtype=np.int64)
    gt_image = np.ascontiguousarray(gt_image, dtype=np.int64)
    low, high = (np.ascontiguousarray(np.broadcast_to(b, gt_image.shape), dtype=np.float64) for b in bounds)
    n_pred, n_gt = len(x0), len(gt_image)
    if len(pred_image) != n_pred:
        raise ValueError("a prediction needs an x_min and an image")
    order, scratch = np.empty(n_pred, np.int64), np.empty(n_pred, np.int64)
    key, key_scratch = np.empty(n_pred), np.empty(n_pred)
    start, stop = np.empty(n_gt, np.int64), np.empty(n_gt, np.int64)
    image_start = np.empty(n_images + 1, np.int64)
    done = _WINDOWS(
        *(x0, pred_image, n_pred, gt_image, low, high, n_gt, n_images),
        *(image_start, order, scratch, key, key_scratch, start, stop),
    )
    if done < 0:
        raise IndexError(f"a box's image is not one of the {n_images} images")
    return order, start, stop
