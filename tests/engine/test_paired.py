"""The paired bootstrap of two prediction sets against a pure-Python reference (same seed, same draws)."""

from __future__ import annotations

from random import Random

import numpy as np
import pytest
from helpers.bootstrap_reference import reference_paired
from hypothesis import given, settings
from hypothesis import strategies as st

from handler.engine.bootstrap import LEVEL
from handler.engine.paired import paired_bootstrap, paired_images
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
