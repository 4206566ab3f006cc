"""`BoxTable[index]` gathers its columns by `np.take`: the same rows as numpy's own indexing, errors too."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from handler.boxes import _COLUMNS, BoxTable


def _table(n: int, seed: int) -> BoxTable:
    rng = np.random.default_rng(seed)
    corner = rng.random((n, 2)) * 100
    xyxy = np.concatenate((corner, corner + rng.random((n, 2)) * 50), axis=1)
    angle = rng.random(n) * (rng.random(n) < 0.3)
    return BoxTable.build(xyxy, rng.integers(0, 5, n), rng.integers(0, 3, n), rng.random(n), angle=angle)


def _index(draw: st.DrawFn, n: int) -> object:
    kind = draw(st.sampled_from(["mask", "positions", "slice"]))
    if kind == "mask":
        return np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    if kind == "positions":
        return np.array(draw(st.lists(st.integers(-n, n - 1), max_size=2 * n)) if n else [], dtype=np.int64)
    return slice(draw(st.integers(0, n)), draw(st.integers(0, n)))


@st.composite
def tables_and_indexes(draw: st.DrawFn) -> tuple[BoxTable, object]:
    n = draw(st.integers(0, 30))
    return _table(n, draw(st.integers(0, 2**16))), _index(draw, n)


@given(tables_and_indexes())
def test_rows_are_numpys_own_indexing(case: tuple[BoxTable, object]) -> None:
    table, index = case
    rows = table[index]
    for name in _COLUMNS:
        expected = getattr(table, name)[index]
        assert getattr(rows, name).dtype == expected.dtype
        np.testing.assert_array_equal(getattr(rows, name), expected)


def test_a_wrong_length_mask_or_position_is_refused_as_numpy_refuses_it() -> None:
    table = _table(4, 0)
    with pytest.raises(IndexError):
        table[np.ones(3, dtype=bool)]
    with pytest.raises(IndexError):
        table[np.array([4])]
