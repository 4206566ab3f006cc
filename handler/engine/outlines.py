"""The outlines of instance masks, as the page's sketches draw them: a few dozen points per object.

Each mask is sampled on a `GRID` x `GRID` grid of cells over its box (a cell is in the object
when the pixel under its centre is), and the grid's boundary is traced into closed loops: every
edge between a cell of the object and one outside it, directed with the object on its right, has
one successor (at a corner where two cells touch only diagonally, the right turn: the object is
4-connected), so the loops are the cycles of a permutation. Each loop is then its edges'
midpoints, every k-th kept so an object has about `MAX_POINTS` points. The walk along the loops is
a kernel's (`kernels/outline_walk.py`): a few hundred edges an object, followed one object after
the other, where whole-array pointer jumping over every edge of every sketched mask cost more than
it saved. No Python loop per mask, cell or point; the masks of every sketched image in one call.
`cycles`, the pointer jumping, serves the exports' exact outlines (`report/exports/mask_outlines.py`).
"""

from __future__ import annotations

from typing import Final

import msgspec
import numpy as np

from handler.boxes import BoolArray, FloatArray, IntArray, MaskRuns, box_size
from handler.engine.masks import extent
from handler.kernels.outline_walk import outline_walk

# Cells across a mask's box: the traced outline's resolution (a sketch is ~150 px wide).
GRID: Final = 32
# Points of one object's outline, over all its loops: at most this and one more a loop (each
# loop keeps its first point).
MAX_POINTS: Final = 48
# A loop left with fewer points than this (a speck, a pinhole) is not drawn.
_MIN_LOOP_POINTS: Final = 3


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


def _sampled_at(masks: MaskRuns) -> tuple[IntArray, IntArray]:
    """(N, GRID) each cell column's and row's part of the column-major position of the pixel under
    the cell's centre (its column times the mask's height, its row): the grid spans each mask's
    extent."""
    box = extent(masks)
    size = box_size(box)
    centre = (np.arange(GRID) + 0.5) / GRID
    xs = np.floor(box[:, 0, None] + centre[None, :] * size[:, 0, None]).astype(np.int64)
    ys = np.floor(box[:, 1, None] + centre[None, :] * size[:, 1, None]).astype(np.int64)
    return xs * masks.height[:, None], ys


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


def outlines(masks: MaskRuns, per_pixel: tuple[float, float] | FloatArray = (1.0, 1.0)) -> Outlines:
    """The outline of each mask, in pixels times `per_pixel` (the sketch's units along x and y: 1
    for pixels, 1 / the image's size for a normalised frame), one (x, y) for every mask or (N, 2)
    a row: the masks of many images' sketches are traced at once. A row without a mask has no
    loops."""
    n = len(masks)
    frame = extent(masks) * np.tile(np.broadcast_to(np.asarray(per_pixel, dtype=np.float64), (n, 2)), 2)
    walked = outline_walk((masks.counts, masks.offsets), *_sampled_at(masks), MAX_POINTS, _MIN_LOOP_POINTS)
    obj = np.repeat(np.arange(n), walked.points)
    xy: FloatArray = frame[obj, :2] + walked.doubled / 2 / GRID * box_size(frame)[obj]
    loop_first = np.r_[0, np.cumsum(walked.loop_size)].astype(np.int64)
    object_first = np.r_[0, np.cumsum(walked.loops)].astype(np.int64)
    return Outlines(xy, loop_first, object_first)
