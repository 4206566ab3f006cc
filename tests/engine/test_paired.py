"""The paired bootstrap of two prediction sets against a pure-Python reference (same seed, same draws)."""

from __future__ import annotations

from random import Random

import numpy as np
import pytest
from helpers.bootstrap_reference import reference_paired
from hypothesis import given, settings
from hypothesis import strategies as st

from handler.engine.bootstrap import LEVEL
from handler.engine.paired import ClassRows, class_intervals, paired_bootstrap, paired_images
from handler.engine.timecost import TimeCosts

COSTS = TimeCosts()


def _images(rng: Random, n: int) -> np.ndarray:
    return np.array([[rng.randint(0, 4) for _ in range(5)] for _ in range(n)], dtype=np.int64)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 20), st.integers(0, 2**32))
def test_the_paired_bootstrap_is_the_reference(data_seed: int, n: int, seed: int) -> None:
    rng = Random(data_seed)
    a, b = _images(rng, n), _images(rng, n)
    found = paired_bootstrap(a, b, COSTS, resamples=1000, seed=seed)
    rows_a, rows_b = [tuple(r) for r in a.tolist()], [tuple(r) for r in b.tolist()]
    ref = reference_paired(rows_a, rows_b, tuple(COSTS.per_outcome()), 1000, seed, LEVEL)
    score = found.score
    assert (score.value, score.low, score.high) == pytest.approx(ref.score, rel=1e-12, abs=1e-12)
    saved = found.seconds_saved
    assert (saved.value, saved.low, saved.high) == pytest.approx(ref.seconds_saved, rel=1e-12, abs=1e-9)
    assert found.images == n and found.resamples == 1000


def test_a_set_against_itself_differs_by_nothing() -> None:
    a = _images(Random(1), 30)
    found = paired_bootstrap(a, a.copy(), COSTS, resamples=1000, seed=5)
    assert (found.score.value, found.score.low, found.score.high) == (0.0, 0.0, 0.0)
    assert (found.seconds_saved.low, found.seconds_saved.high) == (0.0, 0.0)


def test_pairing_keeps_the_shared_ids_in_a_order() -> None:
    rows_a, rows_b = paired_images(["c", "a", "x", "b"], ["b", "c", "y", "a"])
    assert rows_a.tolist() == [0, 1, 3] and rows_b.tolist() == [1, 3, 0]
    empty_a, empty_b = paired_images(["a"], [])
    assert len(empty_a) == 0 and len(empty_b) == 0


def _sparse(dense: np.ndarray) -> ClassRows:
    """(images, classes, 5) counts as the (image, class) rows that have a box."""
    image, class_id = np.nonzero(dense.sum(axis=2))
    return ClassRows(image, class_id, dense[image, class_id])


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 12), st.integers(1, 4), st.integers(0, 2**32))
def test_each_class_interval_is_the_reference_on_that_class(
    data_seed: int, n: int, classes: int, seed: int
) -> None:
    """Per class, the reference's paired bootstrap of that class's per-image counts, same draws."""
    rng = Random(data_seed)
    dense_a, dense_b = (_images(rng, n * classes).reshape(n, classes, 5) * (rng.random() < 0.8) for _ in "ab")
    dense_a[rng.randrange(n), rng.randrange(classes)] = 0  # some (image, class) pairs have no box
    found = class_intervals((_sparse(dense_a), _sparse(dense_b)), n, classes, resamples=1000, seed=seed)
    for c, interval in enumerate(found):
        rows_a, rows_b = ([tuple(r) for r in dense[:, c].tolist()] for dense in (dense_a, dense_b))
        ref = reference_paired(rows_a, rows_b, tuple(COSTS.per_outcome()), 1000, seed, LEVEL)
        assert (interval.value, interval.low, interval.high) == pytest.approx(ref.score, rel=1e-12, abs=1e-12)


def test_class_intervals_come_from_the_whole_runs_resamples() -> None:
    """One class holding every box: its interval is exactly the whole run's; identical sets give 0..0."""
    a, b = _images(Random(2), 25), _images(Random(3), 25)
    rows_a, rows_b = (ClassRows(np.arange(25), np.zeros(25, np.int64), counts) for counts in (a, b))
    (only,) = class_intervals((rows_a, rows_b), 25, 1, resamples=1000, seed=9)
    whole = paired_bootstrap(a, b, COSTS, resamples=1000, seed=9).score
    assert (only.value, only.low, only.high) == (whole.value, whole.low, whole.high)
    dense = _images(Random(4), 30 * 3).reshape(30, 3, 5)
    same = class_intervals((_sparse(dense), _sparse(dense.copy())), 30, 3, resamples=1000, seed=5)
    assert [(d.value, d.low, d.high) for d in same] == [(0.0, 0.0, 0.0)] * 3
