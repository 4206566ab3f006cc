"""The outlines of instance masks, as the page's sketches draw them: a few dozen points per object.

Each mask is sampled on a `GRID` x `GRID` grid of cells over its box (a cell is in the object
when the pixel under its centre is), and the grid's boundary is traced into closed loops: every
edge between a cell of the object and one outside it, directed with the object on its right, has
one successor (at a corner where two cells touch only diagonally, the right turn: the object is
4-connected), so the loops are the cycles of a permutation, labelled and ordered by pointer
jumping. Each loop is then its edges' midpoints, every k-th kept so an object has about
`MAX_POINTS` points. No Python loop per mask, cell or point.
"""

from __future__ import annotations

from typing import Final

import msgspec
import numpy as np
import numpy.typing as npt

from handler.boxes import BoolArray, FloatArray, IntArray, MaskRuns, box_size
from handler.engine.masks import extent, foreground
from handler.kernels.interval_hits import interval_hits

# Cells across a mask's box: the traced outline's resolution (a sketch is ~150 px wide).
GRID: Final = 32
# Points of one object's outline, over all its loops: at most this and one more a loop (each
# loop keeps its first point).
MAX_POINTS: Final = 48
# A loop left with fewer points than this (a speck, a pinhole) is not drawn.
_MIN_LOOP_POINTS: Final = 3

# Directions 0 right, 1 down, 2 left, 3 up (y grows downward, as on the page).
_DX: Final = np.array([1, 0, -1, 0])
_DY: Final = np.array([0, 1, 0, -1])


class Outlines(msgspec.Struct, frozen=True):
    """Closed loops of points, grouped by object: loop l is `xy[loop_first[l]:loop_first[l + 1]]`,
    object r's loops are `object_first[r]:object_first[r + 1]`."""

    xy: FloatArray
    loop_first: IntArray
    object_first: IntArray

    def of(self, row: int) -> list[FloatArray]:
        """Object `row`'s loops, each (points, 2)."""
        loops = range(int(self.object_first[row]), int(self.object_first[row + 1]))
        return [self.xy[self.loop_first[loop] : self.loop_first[loop + 1]] for loop in loops]


def _cells(masks: MaskRuns) -> npt.NDArray[np.bool_]:
    """(N, GRID + 2, GRID + 2) whether the pixel under each cell's centre is the object's, with a
    border of empty cells; the grid spans each mask's extent."""
    n = len(masks)
    box = extent(masks)
    size = box_size(box)
    centre = (np.arange(GRID) + 0.5) / GRID
    xs = np.floor(box[:, 0, None] + centre[None, :] * size[:, 0, None]).astype(np.int64)
    ys = np.floor(box[:, 1, None] + centre[None, :] * size[:, 1, None]).astype(np.int64)
    # Column-major positions of every cell centre, (N, GRID columns, GRID rows): ascending, as a
    # mask's runs are, so one walk through both answers a mask.
    position = xs[:, :, None] * masks.height[:, None, None] + ys[:, None, :]
    fg = foreground(masks)
    inside = interval_hits(fg.row, fg.start, fg.stop, position.reshape(n, GRID * GRID))
    cells = np.zeros((n, GRID + 2, GRID + 2), dtype=bool)
    cells[:, 1:-1, 1:-1] = inside.reshape(n, GRID, GRID).transpose(0, 2, 1) & masks.present[:, None, None]
    return cells


def _edges(cells: npt.NDArray[np.bool_]) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Every boundary edge (object, corner y, corner x, direction), sorted by object: a cell's
    side facing an empty cell, directed clockwise around the cell."""
    inner = cells[:, 1:-1, 1:-1]
    faces = (
        (cells[:, :-2, 1:-1], 0, 0, 0),  # top, rightward from the top-left corner
        (cells[:, 1:-1, 2:], 0, 1, 1),  # right side, downward from the top-right corner
        (cells[:, 2:, 1:-1], 1, 1, 2),  # bottom, leftward from the bottom-right corner
        (cells[:, 1:-1, :-2], 1, 0, 3),  # left side, upward from the bottom-left corner
    )
    found = [(np.nonzero(inner & ~beside), dy, dx, d) for beside, dy, dx, d in faces]
    obj = np.concatenate([at[0] for at, *_ in found])
    y = np.concatenate([at[1] + dy for at, dy, _, _ in found])
    x = np.concatenate([at[2] + dx for at, _, dx, _ in found])
    direction = np.concatenate([np.full(len(at[0]), d) for at, _, _, d in found])
    order = np.argsort(obj, kind="stable")
    return obj[order], y[order], x[order], direction[order]


def _successors(obj: IntArray, y: IntArray, x: IntArray, direction: IntArray, n: int) -> IntArray:
    """Each edge's next edge around its loop: from its end corner, a right turn, else straight on,
    else a left turn."""
    side = GRID + 1
    table = np.full(n * side * side * 4, -1, dtype=np.int64)
    corner = (obj * side + y) * side + x
    table[corner * 4 + direction] = np.arange(len(obj))
    end = corner + _DY[direction] * side + _DX[direction]
    successor: IntArray = np.full(len(obj), -1, dtype=np.int64)
    for turn in (1, 0, 3):
        candidate = table[end * 4 + (direction + turn) % 4]
        successor = np.where(successor < 0, candidate, successor)
    return successor


def cycles(successor: IntArray, longest: int) -> tuple[IntArray, IntArray]:
    """Of a permutation whose cycles are at most `longest` long: each element's cycle (as its
    smallest element, where the cycle starts) and its steps to the cycle's last element (the one
    before the start), by pointer jumping (no loop per element)."""
    steps = max(1, int(longest).bit_length())
    label, jump = np.arange(len(successor)), successor.copy()
    for _ in range(steps):
        label = np.minimum(label, label[jump])
        jump = jump[jump]
    # Cut each cycle before its first element, then count each element's steps to the cut.
    last: BoolArray = label[successor] == successor
    jump = np.where(last, np.arange(len(successor)), successor)
    remaining: IntArray = (~last).astype(np.int64)
    for _ in range(steps):
        remaining = remaining + remaining[jump]
        jump = jump[jump]
    return label, remaining


def outlines(masks: MaskRuns, per_pixel: tuple[float, float] = (1.0, 1.0)) -> Outlines:
    """The outline of each mask, in pixels times `per_pixel` (the sketch's units along x and y: 1
    for pixels, 1 / the image's size for a normalised frame). A row without a mask has no loops."""
    n = len(masks)
    frame = extent(masks) * np.array([*per_pixel, *per_pixel])
    obj, y, x, direction = _edges(_cells(masks))
    successor = _successors(obj, y, x, direction, n)
    label, remaining = cycles(successor, int(np.bincount(obj, minlength=1).max()))  # a loop is one object's
    order = np.lexsort((-remaining, label, obj))
    obj, label, direction = obj[order], label[order], direction[order]
    gx, gy = x[order] + 0.5 * _DX[direction], y[order] + 0.5 * _DY[direction]
    # Every k-th midpoint of each loop, k from its object's edge count.
    per_object = np.bincount(obj, minlength=n)
    k = np.maximum(1, np.ceil(per_object / MAX_POINTS)).astype(np.int64)[obj]
    fresh = np.r_[True, label[1:] != label[:-1]] if len(label) else np.zeros(0, dtype=bool)
    starts = np.flatnonzero(fresh)
    place = np.arange(len(label)) - np.repeat(starts, np.diff(np.r_[starts, len(label)]))
    kept = place % k == 0
    loop_of = np.cumsum(fresh) - 1
    loop_size = np.bincount(loop_of[kept], minlength=len(starts))
    kept &= loop_size[loop_of] >= _MIN_LOOP_POINTS
    corner, size = frame[obj[kept], :2], box_size(frame)[obj[kept]]
    xy: FloatArray = corner + np.stack((gx[kept], gy[kept]), axis=1) / GRID * size
    drawn = loop_size >= _MIN_LOOP_POINTS
    loop_first = np.r_[0, np.cumsum(loop_size[drawn])].astype(np.int64)
    loop_object = obj[starts][drawn]
    object_first = np.searchsorted(loop_object, np.arange(n + 1)).astype(np.int64)
    return Outlines(xy, loop_first, object_first)
