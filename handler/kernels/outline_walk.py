"""The masks' outlines walked in C (`src/outline_walk.c`): each object's grid of cells sampled from
its runs and its boundary edges followed around its loops, one object at a time (a few kilobytes
of scratch, however many objects), the few points kept of each loop written straight out."""

from __future__ import annotations

import msgspec
import numpy as np
import numpy.typing as npt

from handler.kernels import I64, SIZE, U16, kernel

# The masks' runs (counts, their count, offsets, objects), the grids (columns, rows, cells across),
# the limits (points an object keeps, a loop needs, slots an object has), the answers (doubled
# points, loop sizes, points and loops of each object) and scratch.
_WALK = kernel(
    "outline_walk",
    *(U16, SIZE, I64, SIZE),
    *(I64, I64, SIZE),
    *(SIZE, SIZE, SIZE),
    *(I64, I64, I64, I64),
    I64,
    returns=None,
)

Ints = npt.NDArray[np.int64]


class Walked(msgspec.Struct, frozen=True):
    """The kept points of N objects' loops: `doubled` (P, 2) twice each point's (x, y) in corner
    units of the grid (a midpoint of an edge is a whole number so), object by object and loop by
    loop; `loop_size` (L,) each loop's points; `points` and `loops` (N,) each object's."""

    doubled: npt.NDArray[np.int64]
    loop_size: npt.NDArray[np.int64]
    points: npt.NDArray[np.int64]
    loops: npt.NDArray[np.int64]


def outline_walk(
    runs: tuple[npt.NDArray[np.uint16], Ints], columns: Ints, rows: Ints, max_points: int, min_points: int
) -> Walked:
    """The loops of N masks sampled on grids of cells. `runs` are (counts, offsets) as `MaskRuns`
    holds them: mask i's alternating runs of background and object pixels, column-major, are
    `counts[offsets[i]:offsets[i + 1]]`. Its cell (r, j) is in it when the pixel at
    `columns[i, j] + rows[i, r]` is (its place in the mask; columns and rows each ascending).

    Each loop starts at its first edge (faces top, right, bottom, left, each in raster order), an
    object's loops in the order of those; every k-th midpoint is kept, k the object's edges over
    `max_points` rounded up; a loop of fewer than `min_points` kept points is left out."""
    counts, offsets = runs
    n, grid = columns.shape
    if min_points < 2 or rows.shape != (n, grid) or len(offsets) != n + 1:
        raise ValueError(
            f"Expected loops of at least 2 points, {n} masks' rows and offsets but got {min_points}, "
            f"{rows.shape} and {len(offsets)}"
        )
    # An object keeps at most max_points / k points of its edges, plus one a loop for the loop's
    # first; each loop kept has min_points or more, so there are at most max_points / (min_points
    # - 1) loops: this many slots hold every object's points and loops.
    capacity = max_points + max_points // (min_points - 1)
    doubled = np.empty((n, capacity, 2), dtype=np.int64)
    loop_size = np.empty((n, capacity), dtype=np.int64)
    points, loops = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    scratch = np.full(20 * grid * grid + 4 * (grid + 1) * (grid + 1), -1, dtype=np.int64)
    _WALK(
        np.ascontiguousarray(counts, dtype=np.uint16),
        len(counts),
        np.ascontiguousarray(offsets, dtype=np.int64),
        n,
        np.ascontiguousarray(columns, dtype=np.int64),
        np.ascontiguousarray(rows, dtype=np.int64),
        grid,
        max_points,
        min_points,
        capacity,
        doubled,
        loop_size,
        points,
        loops,
        scratch,
    )
    slots = np.arange(capacity)
    return Walked(doubled[slots < points[:, None]], loop_size[slots < loops[:, None]], points, loops)
