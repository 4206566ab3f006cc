"""The per-image bootstrap against a pure-Python reference with the same seed and draws."""

from __future__ import annotations

import tracemalloc
from random import Random

import numpy as np
import pytest
from helpers.bootstrap_reference import reference_bootstrap
from hypothesis import given, settings
from hypothesis import strategies as st

from handler.engine.bootstrap import (
    LEVEL,
    THREADED_DRAWS,
    bootstrap,
    order_statistics,
    resample_times,
    resampled_counts,
)
from handler.engine.score import GRADES
from handler.engine.timecost import TimeCosts

COSTS = TimeCosts()


def _images(seed: int, n: int) -> np.ndarray:
    rng = Random(seed)
    return np.array([[rng.randint(0, 4) for _ in range(5)] for _ in range(n)], dtype=np.int64)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 25), st.integers(0, 2**32))
def test_the_bootstrap_is_the_reference(data_seed: int, n: int, seed: int) -> None:
    counts = _images(data_seed, n)
    found = bootstrap(counts, COSTS, resamples=1000, seed=seed)
    images = [tuple(row) for row in counts.tolist()]
    ref = reference_bootstrap(images, tuple(COSTS.per_outcome()), 1000, seed, LEVEL)
    assert found.score == ref.score
    assert found.seconds_saved == pytest.approx(ref.seconds_saved, rel=1e-12, abs=1e-9)
    assert dict(zip((g for g, _, _ in GRADES), found.grade_shares, strict=True)) == {
        name: float(share) for name, share in ref.grade_shares.items()
    }
    assert found.borderline == ref.borderline
    assert sum(found.grade_shares) == pytest.approx(1)


def test_chunking_does_not_change_the_draws() -> None:
    counts = _images(7, 37)  # odd sizes: a buffered 32-bit draw would differ between chunkings
    whole = resampled_counts(counts, 101, seed=3)
    for draws in (1, 37, 100, 999):
        assert np.array_equal(resampled_counts(counts, 101, seed=3, draws_per_chunk=draws), whole)


def test_resamples_from_a_later_one_are_drawn_as_from_the_first() -> None:
    whole = [times for _, times in resample_times(37, 101, seed=3, draws_per_chunk=37 * 4)]
    later = [times for _, times in resample_times(37, 101, seed=3, draws_per_chunk=37 * 4, first=40)]
    assert np.array_equal(np.vstack(whole)[40:], np.vstack(later))


def test_two_threads_draw_what_one_draws() -> None:
    counts = _images(11, 1000)
    resamples = THREADED_DRAWS // len(counts) + 1  # enough draws for the second thread
    threaded = resampled_counts(counts, resamples, seed=5, cores=2)
    serial = resampled_counts(counts, resamples, seed=5, cores=1)
    assert np.array_equal(threaded, serial)
    assert np.array_equal(threaded[:100], resampled_counts(counts, 100, seed=5))


def test_memory_stays_bounded_for_many_images() -> None:
    counts = np.ones((200_000, 5), dtype=np.int64)
    tracemalloc.start()
    try:
        resampled_counts(counts, 20, seed=1, draws_per_chunk=1 << 16)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The drawn indices of one chunk (200k, since a chunk holds at least one resample), a few times over,
    # and one float copy of the per-image counts; never the 20 x 200k of all resamples at once.
    assert peak < 6 * 200_000 * 8 + counts.nbytes


def test_interval_ranks() -> None:
    assert order_statistics(1000) == (25, 974)
    assert order_statistics(2000) == (50, 1949)


def test_a_sure_result_has_one_grade_and_a_narrow_interval() -> None:
    counts = np.tile([[10, 0, 0, 0, 0]], (50, 1))
    found = bootstrap(counts, COSTS)
    assert found.score == (1.0, 1.0) and not found.borderline
    assert found.likely_grades() == [("Production-grade", 1.0)]


def test_a_result_on_a_grade_bound_is_borderline() -> None:
    # 30 correct of 50 boxes: the score is 0.6 exactly, the Strong assist bound.
    counts = np.array([[2, 0, 0, 0, 0]] * 10 + [[1, 0, 0, 0, 2]] * 10, dtype=np.int64)
    found = bootstrap(counts, COSTS)
    assert found.score[0] < 0.6 <= found.score[1]
    assert found.borderline
    assert [name for name, _ in found.likely_grades()][:2] in (
        ["Strong assist", "Partial assist"],
        ["Partial assist", "Strong assist"],
    )
