"""The bootstrap's resampled sums of per-image counts, in C (`src/resample_sums.c`)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from handler.kernels import POINTER, SIZE, address, kernel


def resample_sums(doubles: npt.NDArray[np.float64], counts: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """(rows, m): for each row of `doubles` (rows, n), one double in [0, 1) per draw, the column
    sums of `counts` (n, m) over the images floor(u · n) it draws."""
    rows, n = doubles.shape
    if counts.shape[0] != n:
        raise ValueError(f"a resample draws among the {counts.shape[0]} images, not {n}")
    m = counts.shape[1]
    summed = np.zeros((rows, m), dtype=np.int64)
    if rows and n and m:
        sums = kernel("resample_sums", POINTER, SIZE, SIZE, POINTER, SIZE, POINTER, returns=None)
        sums(address(doubles, np.float64), rows, n, address(counts, np.int64), m, address(summed, np.int64))
    return summed
