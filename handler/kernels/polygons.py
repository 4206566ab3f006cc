"""COCO polygons rasterised in C (`src/polygons.c`): each part as pycocotools' `frPoly` draws it,
the parts of an object united as its `merge` unites them, the object's runs written directly."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from handler.kernels import POINTER, SIZE, address, kernel

_OFFSETS = "the polygons' offsets do not index their points"


def rasterised(
    xy: npt.NDArray[np.float64],
    part_offsets: npt.NDArray[np.int64],
    row_offsets: npt.NDArray[np.int64],
    height: npt.NDArray[np.int64],
    width: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
    """Object i's parts are `row_offsets[i]:row_offsets[i + 1]`, part p's points
    `xy[part_offsets[p]:part_offsets[p + 1]]` ((P, 2) pixels), drawn on an image of `height[i]` x
    `width[i]`. Returns every object's runs (COCO's, column-major, background first), one object
    after another, and how many each has: none for an image of no pixels or more than COCO's
    32-bit counts hold."""
    xy = np.ascontiguousarray(xy, dtype=np.float64).reshape(-1, 2)
    part_offsets = np.ascontiguousarray(part_offsets, dtype=np.int64)
    row_offsets = np.ascontiguousarray(row_offsets, dtype=np.int64)
    height = np.ascontiguousarray(height, dtype=np.int64)
    width = np.ascontiguousarray(width, dtype=np.int64)
    n, parts = len(height), len(part_offsets) - 1
    if len(width) != n or len(row_offsets) != n + 1 or parts < 0:
        raise ValueError(_OFFSETS)
    shapes = (address(xy, np.float64), len(xy), address(part_offsets, np.int64), parts)
    objects = (address(row_offsets, np.int64), n, address(height, np.int64), address(width, np.int64))
    toggles, columns = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    bounds = kernel("polygon_toggle_bounds", *[POINTER, SIZE] * 2, POINTER, SIZE, *[POINTER] * 4)
    if bounds(*shapes, *objects, address(toggles, np.int64), address(columns, np.int64)) < 0:
        raise ValueError(_OFFSETS)
    # Scratch for the largest object: its toggles found and sorted, a count per column, a parity per part.
    toggle_room = int(toggles.max(initial=0))
    found = np.empty(6 * toggle_room + 1, dtype=np.uint32)
    buckets = np.empty(int(columns.max(initial=0)) + 1, dtype=np.uint32)
    part_room = int(np.diff(row_offsets).max(initial=0))
    parity = np.zeros(part_room + 1, dtype=np.uint8)
    counts = np.empty(int(toggles.sum()) + n, dtype=np.uint32)
    lengths = np.empty(n, dtype=np.int64)
    runs = kernel(
        "polygon_runs", *[POINTER, SIZE] * 2, POINTER, SIZE, *[POINTER] * 3, SIZE, POINTER, SIZE, POINTER,
        SIZE, POINTER, SIZE, POINTER,
    )
    written = runs(
        *shapes,
        *objects,
        address(found, np.uint32),
        toggle_room,
        address(buckets, np.uint32),
        len(buckets) - 1,
        address(parity, np.uint8),
        part_room,
        address(counts, np.uint32),
        len(counts),
        address(lengths, np.int64),
    )
    if written < 0:
        raise ValueError(_OFFSETS)
    return counts[:written].copy(), lengths
