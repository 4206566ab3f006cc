"""The resampled sums kernel against numpy's count of the draws times the per-image counts."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from handler.kernels.resample_sums import resample_sums


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 9), st.integers(1, 12), st.integers(0, 6), st.integers(0, 2**32))
def test_the_sums_are_the_counts_of_the_drawn_images(rows: int, n: int, m: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    doubles = rng.random((rows, n))
    counts = rng.integers(-5, 1000, size=(n, m))
    drawn = (doubles * n).astype(np.intp)
    times = np.stack([np.bincount(row, minlength=n) for row in drawn])
    assert np.array_equal(resample_sums(doubles, counts), times @ counts)


@given(arrays(np.float64, (3, 4), elements=st.sampled_from([np.nan, -0.5, 1.0, 2.0, np.nextafter(1.0, 0)])))
def test_a_double_outside_0_1_draws_an_image_of_the_table(doubles: npt.NDArray[np.float64]) -> None:
    counts = np.arange(4, dtype=np.int64)[:, None] + 1
    summed = resample_sums(doubles, counts)
    assert ((summed >= 4) & (summed <= 16)).all()
