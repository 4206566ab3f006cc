"""The bootstrap's resampled sums of per-image counts, in C (`src/resample_sums.c`)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from handler.kernels import F64, I64, SIZE, kernel

_RESAMPLE_SUMS = kernel("resample_sums", F64, SIZE, SIZE, I64, SIZE, I64, returns=None)


def resample_sums(doubles: npt.NDArray[np.float64], counts: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """(rows, m): for each row of `doubles` (rows, n), one double in [0, 1) per draw, the column
    sums of `counts` (n, m) over the images floor(u · n) it draws."""
    rows, n = doubles.shape
    if counts.shape[0] != n:
        raise ValueError(f"a resample draws among the {counts.shape[0]} images, not {n}")
    m = counts.shape[1]
    summed = np.zeros((rows, m), dtype=np.int64)
    if rows and n and m:
        _RESAMPLE_SUMS(doubles, rows, n, counts, m, summed)
    return summed
