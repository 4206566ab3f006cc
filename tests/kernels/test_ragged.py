"""The ragged gather kernel against the rows cut and joined one by one in Python, and its refusal
of offsets that would take it outside the column."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handler.boxes import MaskRuns, UnmadeMasks
from handler.kernels.ragged import gathered


@st.composite
def ragged_and_rows(draw: st.DrawFn) -> tuple[list[list[int]], list[int]]:
    column = draw(st.lists(st.lists(st.integers(0, 2**32 - 1), max_size=6), max_size=8))
    rows = draw(st.lists(st.integers(0, len(column) - 1), max_size=12)) if column else []
    return column, rows


@settings(max_examples=200, deadline=None)
@given(ragged_and_rows())
def test_the_rows_gathered_are_the_rows_cut_and_joined(drawn: tuple[list[list[int]], list[int]]) -> None:
    column, rows = drawn
    items = np.array([v for row in column for v in row], dtype=np.uint32)
    offsets = np.concatenate(([0], np.cumsum([len(row) for row in column]))).astype(np.int64)
    out, new_offsets = gathered(items, offsets, np.array(rows, dtype=np.int64))
    assert out.dtype == np.uint32
    assert out.tolist() == [v for r in rows for v in column[r]]
    assert new_offsets.tolist() == np.concatenate(([0], np.cumsum([len(column[r]) for r in rows]))).tolist()


def test_items_of_several_numbers_are_copied_whole() -> None:
    points = np.arange(20, dtype=np.float64).reshape(10, 2)
    offsets = np.array([0, 3, 3, 10])
    out, new_offsets = gathered(points, offsets, np.array([2, 0, 1, 0]))
    assert np.array_equal(out, np.concatenate((points[3:10], points[0:3], points[0:3])))
    assert new_offsets.tolist() == [0, 7, 10, 10, 13]


@pytest.mark.parametrize(
    "offsets", [[0, 3, 2, 4], [0, 2, 9], [-1, 2, 4]], ids=["descending", "past the items", "before them"]
)
def test_offsets_outside_the_column_are_refused(offsets: list[int]) -> None:
    items = np.arange(4, dtype=np.uint32)
    rows = np.arange(len(offsets) - 1, dtype=np.int64)[::-1].copy()
    with pytest.raises((ValueError, IndexError)):
        gathered(items, np.array(offsets, dtype=np.int64), rows)


def test_a_selection_of_masks_and_of_polygons_keeps_each_row() -> None:
    runs = MaskRuns(
        np.array([1, 2, 3, 0, 6, 2, 2, 2], dtype=np.uint32),
        np.array([0, 3, 5, 8]),
        np.array([2, 2, 2]),
        np.array([3, 3, 3]),
    )
    picked = runs[np.array([2, 0, 2])]
    assert picked.counts.tolist() == [2, 2, 2, 1, 2, 3, 2, 2, 2] and picked.offsets.tolist() == [0, 3, 6, 9]
    polygons = UnmadeMasks(
        MaskRuns.none(2),
        np.arange(16, dtype=np.float64).reshape(8, 2),
        np.array([0, 3, 5, 8]),
        np.array([0, 2, 3]),
        np.array([9, 9]),
        np.array([9, 9]),
    )
    second = polygons[np.array([1])]
    assert second.points.tolist() == [[10, 11], [12, 13], [14, 15]]
    assert second.part_offsets.tolist() == [0, 3] and second.row_offsets.tolist() == [0, 1]
