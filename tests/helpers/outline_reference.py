"""The outlines' walk as numpy made it before the kernel (`handler/kernels/src/outline_walk.c`):
every edge of every object at once, each edge's successor looked up in a table of every corner, the
loops labelled and ordered by pointer jumping (`engine.outlines.cycles`). The kernel's oracle."""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from handler.boxes import IntArray
from handler.engine.outlines import cycles
from handler.kernels.outline_walk import Walked

# Directions 0 right, 1 down, 2 left, 3 up (y grows downward).
_DX: Final = np.array([1, 0, -1, 0])
_DY: Final = np.array([0, 1, 0, -1])


def _edges(cells: npt.NDArray[np.bool_]) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Every boundary edge (object, corner y, corner x, direction), by object, each object's face
    by face (top, right, bottom, left), each face's in raster order."""
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


def _successors(edges: tuple[IntArray, IntArray, IntArray, IntArray], n: int, side: int) -> IntArray:
    """Each edge's next edge: from its end corner, a right turn, else straight on, else a left turn."""
    obj, y, x, direction = edges
    table = np.full(n * side * side * 4, -1, dtype=np.int64)
    corner = (obj * side + y) * side + x
    table[corner * 4 + direction] = np.arange(len(obj))
    end = corner + _DY[direction] * side + _DX[direction]
    successor: IntArray = np.full(len(obj), -1, dtype=np.int64)
    for turn in (1, 0, 3):
        successor = np.where(successor < 0, table[end * 4 + (direction + turn) % 4], successor)
    return successor


def walked_by_pointer_jumping(cells: npt.NDArray[np.bool_], max_points: int, min_points: int) -> Walked:
    """What `kernels.outline_walk.outline_walk` gives for `cells`, computed on whole arrays."""
    n = len(cells)
    edges = _edges(cells)
    obj, y, x, direction = edges
    successor = _successors(edges, n, cells.shape[1] - 1)
    label, remaining = cycles(successor, int(np.bincount(obj, minlength=1).max()))
    order = np.lexsort((-remaining, label, obj))
    obj, label, direction = obj[order], label[order], direction[order]
    doubled = np.stack((2 * x[order] + _DX[direction], 2 * y[order] + _DY[direction]), axis=1)
    k = np.maximum(1, np.ceil(np.bincount(obj, minlength=n) / max_points)).astype(np.int64)[obj]
    fresh = np.r_[True, label[1:] != label[:-1]] if len(label) else np.zeros(0, dtype=bool)
    starts = np.flatnonzero(fresh)
    place = np.arange(len(label)) - np.repeat(starts, np.diff(np.r_[starts, len(label)]))
    kept = place % k == 0
    loop_of = np.cumsum(fresh) - 1
    loop_size = np.bincount(loop_of[kept], minlength=len(starts))
    kept &= loop_size[loop_of] >= min_points
    drawn = loop_size >= min_points
    return Walked(
        doubled[kept].astype(np.int64),
        loop_size[drawn].astype(np.int64),
        np.bincount(obj[kept], minlength=n).astype(np.int64),
        np.bincount(obj[starts][drawn], minlength=n).astype(np.int64),
    )
