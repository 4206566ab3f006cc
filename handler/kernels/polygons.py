"""COCO polygons rasterised in C (`src/polygons.c`): each part as pycocotools' `frPoly` draws it,
the parts of an object united as its `merge` unites them, the object's runs written directly."""

from __future__ import annotations

import ctypes
import itertools
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from handler.kernels import POINTER, SIZE, address, kernel

_OFFSETS = "the polygons' offsets do not index their points"
# The arguments that say what the polygons are (`Polygons` in the source).
_POLYGONS = (POINTER, SIZE, POINTER, SIZE, POINTER, SIZE, POINTER, POINTER)
# Toggles found at once (a band of an object's columns): a few MB of scratch, touched only as used.
_TOGGLE_ROOM = 1 << 18
# Points from which objects are drawn in blocks on threads: below, a thread costs more than it saves.
_THREADED_POINTS = 1 << 16
# Runs written before the room grows: an object's bound (its toggles) can far exceed its runs.
_RUN_ROOM = 1 << 24


@dataclass(frozen=True)
class _Scratch:
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

    def arguments(self) -> tuple[Any, ...]:
        return (
            address(self.toggles, np.uint32),
            self.room,
            address(self.buckets, np.uint32),
            address(self.parity, np.uint8),
            len(self.parity) - 1,
        )


@dataclass(frozen=True)
class _Polygons:
    """The arrays `rasterised` is given, as the kernel takes them."""

    xy: npt.NDArray[np.float64]
    part_offsets: npt.NDArray[np.int64]
    row_offsets: npt.NDArray[np.int64]
    height: npt.NDArray[np.int64]
    width: npt.NDArray[np.int64]

    def blocks(self) -> list[tuple[int, int]]:
        """Ranges of objects of about as many points each, one a core where the points are many."""
        workers, n = os.cpu_count() or 1, len(self.height)
        if len(self.xy) < _THREADED_POINTS or workers == 1 or n < 2:
            return [(0, n)]
        ends = self.part_offsets[self.row_offsets[1:]]
        cuts = np.searchsorted(ends, np.arange(1, workers) * (len(self.xy) / workers))
        return list(itertools.pairwise(np.unique(np.concatenate(([0], cuts, [n]))).tolist()))

    def bounds(self) -> npt.NDArray[np.int64]:
        """Each object's room for its runs (more than its toggles or its pixels, whichever is fewer)."""
        bounds = np.empty(len(self.height), dtype=np.int64)
        arguments = self.arguments(0, len(self.height))
        if kernel("polygon_run_bounds", *_POLYGONS, POINTER)(*arguments, address(bounds, np.int64)) < 0:
            raise ValueError(_OFFSETS)
        return bounds

    def arguments(self, first: int, last: int) -> tuple[Any, ...]:
        """Objects `first:last` (every part and point: their offsets say which are theirs)."""
        rows = self.row_offsets[first : last + 1]
        return (
            *(address(self.xy, np.float64), len(self.xy)),
            *(address(self.part_offsets, np.int64), len(self.part_offsets) - 1),
            *(address(rows, np.int64), last - first),
            *(address(self.height[first:last], np.int64), address(self.width[first:last], np.int64)),
        )


def rasterised(
    xy: npt.NDArray[np.float64],
    part_offsets: npt.NDArray[np.int64],
    row_offsets: npt.NDArray[np.int64],
    height: npt.NDArray[np.int64],
    width: npt.NDArray[np.int64],
    *,
    toggle_room: int = _TOGGLE_ROOM,
    run_room: int = _RUN_ROOM,
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
    """Object i's parts are `row_offsets[i]:row_offsets[i + 1]`, part p's points
    `xy[part_offsets[p]:part_offsets[p + 1]]` ((P, 2) pixels), drawn on an image of `height[i]` x
    `width[i]`. Returns every object's runs (COCO's, column-major, background first), one object
    after another, and how many each has: none for an image of no pixels or more than COCO's
    32-bit counts hold. The toggles of an object's columns are found `toggle_room` at a time at
    most (in bands of columns), and runs written into room for `run_room`, grown as needed.
    Many points are drawn in blocks of objects, one a core, on threads (a kernel releases the GIL)."""
    polygons = _Polygons(
        np.ascontiguousarray(xy, dtype=np.float64).reshape(-1, 2),
        np.ascontiguousarray(part_offsets, dtype=np.int64),
        np.ascontiguousarray(row_offsets, dtype=np.int64),
        np.ascontiguousarray(height, dtype=np.int64),
        np.ascontiguousarray(width, dtype=np.int64),
    )
    n = len(polygons.height)
    if len(polygons.width) != n or len(polygons.row_offsets) != n + 1 or len(polygons.part_offsets) < 1:
        raise ValueError(_OFFSETS)
    bounds = polygons.bounds()
    room, blocks = int(bounds.sum()), polygons.blocks()
    if len(blocks) > 1 and room <= run_room:
        return _threaded(polygons, blocks, bounds, toggle_room)
    scratch = _Scratch.of(polygons.part_offsets, polygons.row_offsets, toggle_room)
    return _written(polygons.arguments(0, n), scratch, min(room, run_room))


def _threaded(
    polygons: _Polygons, blocks: list[tuple[int, int]], bounds: npt.NDArray[np.int64], toggle_room: int
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
    """Blocks of objects drawn on threads, each into its part of one room (its objects' bounds
    hold their runs), then moved together: no block's runs are copied into another array."""
    starts = np.zeros(len(bounds) + 1, dtype=np.int64)
    np.cumsum(bounds, out=starts[1:])
    counts, lengths = np.empty(int(starts[-1]), dtype=np.uint32), np.zeros(len(bounds), dtype=np.int64)

    def drawn(block: tuple[int, int]) -> None:
        first, last = block
        scratch = _Scratch.of(polygons.part_offsets, polygons.row_offsets[first : last + 1], toggle_room)
        room = counts[starts[first] : starts[last]]
        if _runs_into(polygons.arguments(first, last), 0, scratch, room, lengths[first:last]) < last - first:
            raise ValueError(_OFFSETS)

    with ThreadPoolExecutor(len(blocks)) as pool:
        list(pool.map(drawn, blocks))
    used = 0
    for first, last in blocks:
        size = int(lengths[first:last].sum())
        ctypes.memmove(counts.ctypes.data + 4 * used, counts.ctypes.data + 4 * int(starts[first]), 4 * size)
        used += size
    return _kept(counts, used), lengths


def _runs_into(
    polygons: tuple[Any, ...],
    first: int,
    scratch: _Scratch,
    room: npt.NDArray[np.uint32],
    lengths: npt.NDArray[np.int64],
) -> int:
    """The runs of objects `first` on written into `room` until one finds none: how many were."""
    runs = kernel(
        "polygon_runs", *_POLYGONS, SIZE, POINTER, SIZE, POINTER, POINTER, SIZE, *[POINTER, SIZE, POINTER]
    )
    out = (address(room, np.uint32) if len(room) else None, len(room), address(lengths, np.int64))
    written: int = runs(*polygons, first, *scratch.arguments(), *out)
    if written < 0:
        raise ValueError(_OFFSETS)
    return written


def _written(
    polygons: tuple[Any, ...], scratch: _Scratch, room: int
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
    """The runs written object after object from room for `room`, the room doubled (and the
    object that found none written again) until every object is."""
    n = polygons[5]
    counts, lengths = np.empty(room, dtype=np.uint32), np.zeros(n, dtype=np.int64)
    done = used = 0
    while True:
        written = _runs_into(polygons, done, scratch, counts[used:], lengths)
        used += int(lengths[done : done + written].sum())
        done += written
        if done == n:
            return _kept(counts, used), lengths
        grown = np.empty(2 * len(counts) + 1, dtype=np.uint32)
        grown[:used] = counts[:used]
        counts = grown


def _kept(counts: npt.NDArray[np.uint32], used: int) -> npt.NDArray[np.uint32]:
    """The first `used` runs: a view where the room was near them (a copy would cost more than
    the room left over), else a copy."""
    return counts[:used] if 2 * used > len(counts) else counts[:used].copy()
