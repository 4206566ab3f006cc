"""The interval hits kernel against the intervals tried one by one in Python, in any order of the
positions, and its safety on intervals that are not what it was promised."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from handler.boxes import IntArray
from handler.kernels.interval_hits import interval_hits

Intervals = list[list[tuple[int, int]]]


@st.composite
def groups_and_positions(draw: st.DrawFn) -> tuple[Intervals, list[list[int]]]:
    """Each group's intervals ascending and disjoint (as a mask's runs), and its positions."""
    groups = draw(st.integers(0, 5))
    per = draw(st.integers(0, 12))
    intervals = []
    for _ in range(groups):
        ends = sorted(set(draw(st.lists(st.integers(-5, 60), max_size=10))))
        pairs = list(zip(ends[::2], ends[1::2], strict=False))
        intervals.append([(a, b) for a, b in pairs if a < b])
    positions = [draw(st.lists(st.integers(-8, 64), min_size=per, max_size=per)) for _ in range(groups)]
    return intervals, positions


def _columns(intervals: Intervals) -> tuple[IntArray, IntArray, IntArray]:
    rows = [(g, a, b) for g, pairs in enumerate(intervals) for a, b in pairs]
    group, start, stop = (np.array([row[i] for row in rows], dtype=np.int64) for i in range(3))
    return group, start, stop


@settings(max_examples=300, deadline=None)
@given(groups_and_positions(), st.booleans())
def test_a_position_hits_where_one_of_its_group_s_intervals_holds_it(
    drawn: tuple[Intervals, list[list[int]]], ascending: bool
) -> None:
    intervals, positions = drawn
    if ascending:
        positions = [sorted(row) for row in positions]
    per = len(positions[0]) if positions else 0
    wanted = np.array(positions, dtype=np.int64).reshape(len(intervals), per)
    hit = interval_hits(*_columns(intervals), wanted)
    expected = [
        [any(a <= p < b for a, b in pairs) for p in row]
        for pairs, row in zip(intervals, positions, strict=True)
    ]
    assert hit.dtype == np.bool_
    assert hit.tolist() == (expected if per else [[] for _ in intervals])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(-3, 6), st.integers(-50, 50), st.integers(-50, 50)), max_size=12),
    st.integers(0, 4),
    st.integers(0, 6),
)
def test_intervals_out_of_order_or_overlapping_are_read_inside_their_arrays(
    rows: list[tuple[int, int, int]], groups: int, per: int
) -> None:
    """Unsorted groups, reversed or overlapping intervals: an answer of the right shape and no crash
    (the kernel clamps each group's intervals to the arrays it was given)."""
    group, start, stop = (np.array([row[i] for row in rows], dtype=np.int64) for i in range(3))
    positions = np.arange(groups * per, dtype=np.int64).reshape(groups, per) - 10
    assert interval_hits(group, start, stop, positions).shape == (groups, per)
