"""COCO polygons rasterised in C (`src/polygons.c`): each part as pycocotools' `frPoly` draws it,
the parts of an object united as its `merge` unites them, the object's runs written directly."""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from handler.kernels import F64, I64, SIZE, U8, U16, U32, kernel, on_two_threads

_OFFSETS = "the polygons' offsets do not index their points"
# The arguments that say what the polygons are (`Polygons` in the source).
_POLYGONS = (F64, SIZE, I64, SIZE, I64, SIZE, I64, I64)
_RUN_BOUNDS = kernel("polygon_run_bounds", *_POLYGONS, I64)
# The polygons, the first object to write, the scratch (`_Scratch.arguments`), the runs' room.
_RUNS = kernel("polygon_runs", *_POLYGONS, SIZE, U32, SIZE, U32, U8, SIZE, U16, SIZE, I64)
# Toggles found at once (a band of an object's columns): a few MB of scratch, touched only as used.
_TOGGLE_ROOM = 1 << 18
# Runs written before the room grows: an object's bound (its toggles) can far exceed its runs.
_RUN_ROOM = 1 << 24


class _Scratch(msgspec.Struct, frozen=True):
    """The kernel's working room: the toggles of a band of columns found and sorted (3 x uint32
    each), a count per column of the band, a parity per part of an object."""

    room: int
    toggles: npt.NDArray[np.uint32]
    buckets: npt.NDArray[np.uint32]
    parity: npt.NDArray[np.uint8]

    @classmethod
    def of(
        cls, part_offsets: npt.NDArray[np.int64], row_offsets: npt.NDArray[np.int64], room: int
    ) -> _Scratch:
        """Room for `room` toggles, and at least two for each edge of the largest object (a band
        is then a column or more)."""
        edges = part_offsets[row_offsets[1:]] - part_offsets[row_offsets[:-1]]
        room = max(room, 2 * int(edges.max(initial=0)))
        parts = int(np.diff(row_offsets).max(initial=0))
        return cls(
            room,
            np.empty(6 * room, dtype=np.uint32),
            np.empty(room + 1, dtype=np.uint32),
            np.zeros(parts + 1, dtype=np.uint8),
        )

    def arguments(self) -> tuple[object, ...]:
        return (self.toggles, self.room, self.buckets, self.parity, len(self.parity) - 1)


def rasterised(
    xy: npt.NDArray[np.float64],
    part_offsets: npt.NDArray[np.int64],
    row_offsets: npt.NDArray[np.int64],
    height: npt.NDArray[np.int64],
    width: npt.NDArray[np.int64],
    *,
    toggle_room: int = _TOGGLE_ROOM,
    run_room: int = _RUN_ROOM,
    halves: bool = False,
) -> tuple[npt.NDArray[np.uint16], npt.NDArray[np.int64]]:
    """Object i's parts are `row_offsets[i]:row_offsets[i + 1]`, part p's points
    `xy[part_offsets[p]:part_offsets[p + 1]]` ((P, 2) pixels), drawn on an image of `height[i]` x
    `width[i]`. Returns every object's runs (COCO's, column-major, background first; 16-bit, a
    longer run in pieces as `MaskRuns` stores it), one object after another, and how many each
    has: none for an image of no pixels or more than COCO's 32-bit counts hold. The toggles of an
    object's columns are found `toggle_room` at a time at most (in bands of columns), and runs
    written into room for `run_room`, grown as needed.
    With `halves`, and runs that fit `run_room`, the objects' later half is written on a second
    thread (`_two_halves`)."""
    xy = np.ascontiguousarray(xy, dtype=np.float64).reshape(-1, 2)
    part_offsets = np.ascontiguousarray(part_offsets, dtype=np.int64)
    row_offsets = np.ascontiguousarray(row_offsets, dtype=np.int64)
    height = np.ascontiguousarray(height, dtype=np.int64)
    width = np.ascontiguousarray(width, dtype=np.int64)
    n, parts = len(height), len(part_offsets) - 1
    if len(width) != n or len(row_offsets) != n + 1 or parts < 0:
        raise ValueError(_OFFSETS)
    polygons = (xy, len(xy), part_offsets, parts, row_offsets, n, height, width)
    bounds = np.empty(n, dtype=np.int64)
    if _RUN_BOUNDS(*polygons, bounds) < 0:
        raise ValueError(_OFFSETS)
    room = int(bounds.sum())
    if halves and room <= run_room:
        return _two_halves(polygons, bounds, toggle_room)
    scratch = _Scratch.of(part_offsets, row_offsets, toggle_room)
    return _written(polygons, scratch, min(room, run_room))


def _two_halves(
    polygons: tuple[Any, ...], bounds: npt.NDArray[np.int64], toggle_room: int
) -> tuple[npt.NDArray[np.uint16], npt.NDArray[np.int64]]:
    """The objects' runs written into one array sized by their bounds (room enough for each
    object, so none is written again), the later half of the bounds from its own place on a
    second thread (the kernel releases the GIL), then moved down to follow the first half's."""
    ends = np.cumsum(bounds)
    n, room = len(bounds), int(ends[-1]) if len(ends) else 0
    half = int(np.searchsorted(ends, room // 2))
    start = int(ends[half - 1]) if half else 0
    counts, lengths = np.empty(room, dtype=np.uint16), np.zeros(n, dtype=np.int64)

    def write(first: int, stop: int, into: npt.NDArray[np.uint16]) -> int:
        xy, points, part_offsets, parts, row_offsets, _, height, width = polygons
        rows = row_offsets[first : stop + 1]
        scratch = _Scratch.of(part_offsets, rows, toggle_room)
        some = (xy, points, part_offsets, parts, rows, stop - first, height[first:stop], width[first:stop])
        own = lengths[first:stop]
        if _RUNS(*some, 0, *scratch.arguments(), into, len(into), own) != stop - first:
            raise ValueError(_OFFSETS)
        return int(own.sum())

    used, moved = on_two_threads(
        lambda: write(0, half, counts[:start]), lambda: write(half, n, counts[start:])
    )
    # One direction, one dimension: numpy moves overlapping runs in place, with no copy.
    counts[used : used + moved] = counts[start : start + moved]
    return _kept(counts, used + moved), lengths


def _written(
    polygons: tuple[Any, ...], scratch: _Scratch, room: int
) -> tuple[npt.NDArray[np.uint16], npt.NDArray[np.int64]]:
    """The runs written object after object from room for `room`, the room doubled (and the
    object that found none written again) until every object is."""
    n = polygons[5]
    counts, lengths = np.empty(room, dtype=np.uint16), np.zeros(n, dtype=np.int64)
    done = used = 0
    while True:
        rest = counts[used:]
        written = _RUNS(*polygons, done, *scratch.arguments(), rest, len(rest), lengths)
        if written < 0:
            raise ValueError(_OFFSETS)
        used += int(lengths[done : done + written].sum())
        done += written
        if done == n:
            return _kept(counts, used), lengths
        grown = np.empty(2 * len(counts) + 1, dtype=np.uint16)
        grown[:used] = counts[:used]
        counts = grown


def _kept(counts: npt.NDArray[np.uint16], used: int) -> npt.NDArray[np.uint16]:
    """The runs written in the room: a view where they fill most of it (the bounds are near the
    runs written, and a copy would cost more than the room left over), else a copy."""
    return counts[:used] if 2 * used > len(counts) else counts[:used].copy()
