"""Masks as polygons, for the targets that write polygons: each mask's exact boundary, its
parts and holes joined into one ring by bridges of no width, so that pycocotools (and every
reader that draws a polygon as it does) draws the ring back as the mask itself, pixel for pixel.

Made over all the masks at once (numpy, no Python step per pixel, edge or mask):

1. the boundary's edges: per horizontal run of a mask, its left side (going up) and its right
   side (going down); per line between two rows, where one row covers and the other does not
   (going right on top of a row, left under it): every edge has the mask on its right;
2. each edge's next is the edge starting where it ends (at a corner two parts touch diagonally,
   either pairing closes rings); the rings are labelled by their first edge and ordered by
   pointer doubling (log steps over the rings, not a walk);
3. a corner is kept where the direction turns;
4. a mask's first ring is its outline; every other ring (another part, a hole) is entered from
   the first ring's first point and left back to it, so the bridge is drawn twice and adds
   nothing (a polygon is drawn by the parity of its crossings).
"""

from __future__ import annotations

from typing import Final

import msgspec
import numpy as np
from msgspec.structs import astuple

from handler.boxes import IntArray, MaskRuns
from handler.engine.outlines import cycles
from handler.report.exports.mask_encodings import RowRuns, in_groups, row_runs

RIGHT, DOWN, LEFT, UP = 0, 1, 2, 3
_NO_EDGES: Final = np.zeros(0, dtype=np.int64)


class Outlines(msgspec.Struct, frozen=True):
    """One polygon per mask: mask i's points are `points[offsets[i]:offsets[i + 1]]` ((P, 2) pixel
    corners, x then y); a mask without pixels has none."""

    points: IntArray
    offsets: IntArray


class _Edges(msgspec.Struct, frozen=True):
    """Boundary edges, each from (x, y) to (end_x, end_y), going `direction`, of mask `owner`."""

    owner: IntArray
    x: IntArray
    y: IntArray
    end_x: IntArray
    end_y: IntArray
    direction: IntArray

    def __getitem__(self, rows: IntArray) -> _Edges:
        return _Edges(*(column[rows] for column in astuple(self)))


def outlines(masks: MaskRuns) -> Outlines:
    """Each mask as one polygon, exact (see the module), a group of masks at a time."""
    found = [_outlines(group) for group in in_groups(masks)]
    counts = [np.diff(outline.offsets) for outline in found]
    return Outlines(
        np.concatenate([outline.points for outline in found]) if found else np.zeros((0, 2), dtype=np.int64),
        np.concatenate(([0], np.cumsum(np.concatenate(counts)) if counts else [])).astype(np.int64),
    )


def _outlines(masks: MaskRuns) -> Outlines:
    edges = _boundary(row_runs(masks))
    order, label = _ring_order(edges)
    ordered = edges[order]
    previous = np.arange(len(label)) - 1
    first = np.flatnonzero(np.diff(label, prepend=-1) != 0)
    ends = np.append(first[1:], len(label)) - 1
    previous[first] = ends  # a ring's first edge comes after its last
    turns = ordered.direction != ordered.direction[previous]
    return _bridged(ordered.owner[turns], label[turns], ordered.x[turns], ordered.y[turns], len(masks))


def _boundary(runs: RowRuns) -> _Edges:
    """Every boundary edge of the masks, in mask order."""
    between = _between_rows(runs)
    n = len(runs.y)
    vertical = _Edges(
        np.concatenate((runs.owner, runs.owner)),
        np.concatenate((runs.x0, runs.x1)),
        np.concatenate((runs.y + 1, runs.y)),
        np.concatenate((runs.x0, runs.x1)),
        np.concatenate((runs.y, runs.y + 1)),
        np.repeat(np.array([UP, DOWN]), n),
    )
    joined = _Edges(
        *(np.concatenate((v, b)) for v, b in zip(astuple(vertical), astuple(between), strict=True))
    )
    return joined[np.argsort(joined.owner, kind="stable")]


def _between_rows(runs: RowRuns) -> _Edges:
    """The edges on the lines between rows: where the row below covers and the one above does not
    (the top of the mask, going right), and the other way (its bottom, going left). A run is below
    the line at its row and above the next one: the two coverages are counted along each line."""
    x_bits = int(runs.x1.max(initial=0) + 1).bit_length()
    line_bits = int(runs.y.max(initial=0) + 2).bit_length()
    line = np.concatenate((runs.y, runs.y, runs.y + 1, runs.y + 1))
    x = np.concatenate((runs.x0, runs.x1, runs.x0, runs.x1))
    owner = np.tile(runs.owner, 4)
    ones = np.ones(len(runs.y), dtype=np.int64)
    below = np.concatenate((ones, -ones, 0 * ones, 0 * ones))
    key = (((owner << line_bits) | line) << x_bits) | x
    order = np.argsort(key, kind="stable")
    key, x = key[order], x[order]
    covered_below = np.cumsum(below[order])
    covered_above = np.cumsum(np.concatenate((0 * ones, 0 * ones, ones, -ones))[order])
    line_of = key >> x_bits
    span = np.flatnonzero((line_of[1:] == line_of[:-1]) & (x[1:] > x[:-1]))
    top = span[(covered_below[span] == 1) & (covered_above[span] == 0)]
    bottom = span[(covered_above[span] == 1) & (covered_below[span] == 0)]
    line_of_top, line_of_bottom = (
        line_of[top] & ((1 << line_bits) - 1),
        line_of[bottom] & ((1 << line_bits) - 1),
    )
    return _Edges(
        np.concatenate((line_of[top] >> line_bits, line_of[bottom] >> line_bits)),
        np.concatenate((x[top], x[bottom + 1])),
        np.concatenate((line_of_top, line_of_bottom)),
        np.concatenate((x[top + 1], x[bottom])),
        np.concatenate((line_of_top, line_of_bottom)),
        np.concatenate((np.full(len(top), RIGHT), np.full(len(bottom), LEFT))),
    )


def _ring_order(edges: _Edges) -> tuple[IntArray, IntArray]:
    """The edges ring by ring (rings in mask order, each by its first edge), each ring's from its
    first edge along the boundary; and, in that order, each edge's ring (its first edge)."""
    following = _following(edges)
    # a ring is within one mask
    label, to_last = cycles(following, int(np.bincount(edges.owner).max(initial=1)))
    longest = int(to_last.max(initial=0)) + 1
    order = np.argsort(label * longest + (longest - 1 - to_last))
    return order, label[order]


def _following(edges: _Edges) -> IntArray:
    """Each edge's next along the boundary: one starting where it ends (as many start at a corner
    as end there: the k-th to end is followed by the k-th to start)."""
    x_bits = int(max(edges.x.max(initial=0), edges.end_x.max(initial=0)) + 1).bit_length()
    y_bits = int(max(edges.y.max(initial=0), edges.end_y.max(initial=0)) + 1).bit_length()
    starts = np.argsort((((edges.owner << x_bits) | edges.x) << y_bits) | edges.y, kind="stable")
    ends = np.argsort((((edges.owner << x_bits) | edges.end_x) << y_bits) | edges.end_y, kind="stable")
    following = np.empty(len(starts), dtype=np.int64)
    following[ends] = starts
    return following


def _bridged(owner: IntArray, ring: IntArray, x: IntArray, y: IntArray, n: int) -> Outlines:
    """One polygon per mask from its rings' corners (in order, ring by ring): the first ring, then
    for each other ring the first ring's first point, the ring, and the ring's first point again
    (whence the polygon goes on, or closes, back to the first ring's first point)."""
    ring_first = np.flatnonzero(np.diff(ring, prepend=-1) != 0)
    lengths = np.diff(np.append(ring_first, len(ring)))
    opens_mask = np.diff(owner[ring_first], prepend=-1) != 0
    bridge = (~opens_mask).astype(np.int64)
    size = lengths + 2 * bridge
    start = np.cumsum(size) - size
    mask_first = np.maximum.accumulate(
        np.where(opens_mask, ring_first, 0)
    )  # per ring: its mask's first point
    ring_of = np.repeat(np.arange(len(ring_first)), lengths)
    at = start[ring_of] + bridge[ring_of] + np.arange(len(ring)) - ring_first[ring_of]
    total = int(size.sum())
    out_x, out_y, out_owner = (np.empty(total, dtype=np.int64) for _ in range(3))
    out_x[at], out_y[at], out_owner[at] = x, y, owner
    bridged = np.flatnonzero(bridge)
    enter, leave = start[bridged], start[bridged] + size[bridged] - 1
    home, back = mask_first[bridged], ring_first[bridged]
    out_x[enter], out_y[enter], out_owner[enter] = x[home], y[home], owner[home]
    out_x[leave], out_y[leave], out_owner[leave] = x[back], y[back], owner[back]
    # A point equal to the one before it (a ring touching the first at its first point) is an edge
    # of no length, which pycocotools draws as damage: left out.
    again = np.zeros(total, dtype=bool)
    again[1:] = (out_owner[1:] == out_owner[:-1]) & (out_x[1:] == out_x[:-1]) & (out_y[1:] == out_y[:-1])
    kept = ~again
    counts = np.bincount(out_owner[kept], minlength=n)
    return Outlines(
        np.column_stack((out_x[kept], out_y[kept])), np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    )
