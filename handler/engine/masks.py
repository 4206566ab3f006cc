"""Instance masks as runs (`MaskRuns`, COCO's uncompressed RLE): made, measured and compared.

Every function is vectorised over all the masks (or pairs) it is given, with no Python loop per
mask, run or pair; nothing here reads a file. The conventions are pycocotools', so that every
figure agrees with it bit for bit:

- `from_polygons` rasterises as pycocotools' `frPoly` does (points scaled by 5, each edge walked
  pixel by pixel, the crossings of pixel centres kept), and the parts of one object are united as
  `merge` does;
- `from_strings` decodes COCO's compressed `counts` strings (`rleFrString`);
- `measured_iou` is `mask.iou` (non-crowd): the pixels of the intersection over those of the union,
  0 where the intersection is empty;
- `extent` is `toBbox` as a box `[x_min, y_min, x_max, y_max]` over the pixels' edges.

A mask's foreground is a set of half-open intervals of pixel positions, position `x * height +
y` (column-major) (`foreground`); cut at the columns, they are the pieces two masks are compared
by, column by column (`Measured`).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from handler.boxes import BoolArray, FloatArray, IntArray, MaskRuns, Masks, UnmadeMasks, box_size
from handler.engine.iou import iou_of_intersection
from handler.kernels import rle_strings

# pycocotools' frPoly walks the outline at 5 points per pixel.
_SCALE: Final = 5.0
# Query points gathered at once by `measured_iou`: a few MB of columns.
_QUERY_BUDGET: Final = 1 << 20
# Runs measured at once by `Measured`: the intervals' columns stay tens of MB.
_RUN_BUDGET: Final = 1 << 20
# Polygon points rasterised at once by `made`: the outline's per-step columns stay a few tens of MB.
_POINT_BUDGET: Final = 1 << 17


@dataclass(frozen=True)
class Foreground:
    """The foreground of masks as half-open intervals of column-major pixel positions, each
    mask's in order: mask `row[i]` covers `start[i]:stop[i]`."""

    row: IntArray
    start: IntArray
    stop: IntArray


def foreground(masks: MaskRuns) -> Foreground:
    """The intervals of each mask's pixels (its runs of 1s that are not empty). The runs of all
    the masks add up along one line (each mask's sum to its size), so one running sum places
    every run; a run is of 1s where its place in its mask is odd."""
    lengths = np.diff(masks.offsets)
    odd_first = np.repeat((masks.offsets[:-1] & 1).astype(np.int8), lengths)
    alternating = np.zeros(len(masks.counts), dtype=np.int8)
    alternating[1::2] = 1
    ones = np.flatnonzero((alternating != odd_first) & (masks.counts > 0))
    ends = np.cumsum(masks.counts, dtype=np.int64)
    row = np.repeat(np.arange(len(masks), dtype=np.int64), lengths)[ones]
    base = np.zeros(len(masks), dtype=np.int64)
    begun = np.flatnonzero(masks.offsets[:-1] > 0)
    base[begun] = ends[masks.offsets[begun] - 1]
    before = base[row]
    return Foreground(row, ends[ones - 1] - before, ends[ones] - before)


def well_formed(masks: MaskRuns) -> BoolArray:
    """(N,) whether each mask's runs cover its height x width pixels exactly (a decoded string or
    a written list of runs may not)."""
    lengths = np.diff(masks.offsets)
    total = np.bincount(
        np.repeat(np.arange(len(masks)), lengths), weights=masks.counts, minlength=len(masks)
    ).astype(np.int64)
    fits: BoolArray = (lengths > 0) & (total == masks.height * masks.width)
    return fits


def _from_intervals(
    row: IntArray, start: IntArray, stop: IntArray, height: IntArray, width: IntArray
) -> MaskRuns:
    """Masks from the intervals of their pixels, sorted by (row, start), disjoint and not touching:
    runs `start_0, stop_0 - start_0, start_1 - stop_0, …` and the background to the end."""
    n = len(height)
    per_row = np.bincount(row, minlength=n)
    total = height * width
    # Each row: two runs per interval (the 0s before it, its 1s) and the 0s after the last when
    # there are any; a row without intervals is one run of 0s.
    last_stop = np.zeros(n, dtype=np.int64)
    has = per_row > 0
    last_stop[has] = stop[np.cumsum(per_row)[has] - 1]
    trailing = (total - last_stop > 0).astype(np.int64)
    lengths = np.where(has, 2 * per_row + trailing, 1)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    counts = np.zeros(offsets[-1], dtype=np.int64)
    counts[offsets[:-1]] = total  # rows without intervals: one run of 0s
    within = np.arange(len(row), dtype=np.int64) - np.repeat(np.cumsum(per_row) - per_row, per_row)
    at = offsets[:-1][row] + 2 * within
    previous_stop = np.where(within > 0, np.concatenate(([0], stop[:-1])), 0)
    counts[at] = start - previous_stop
    counts[at + 1] = stop - start
    counts[offsets[1:][has & (trailing > 0)] - 1] = (total - last_stop)[has & (trailing > 0)]
    return MaskRuns(counts.astype(np.uint32), offsets, height.astype(np.int64), width.astype(np.int64))


def from_bitmaps(bitmaps: npt.NDArray[np.bool_]) -> MaskRuns:
    """(N, height, width) binary masks as runs (pycocotools' `encode`)."""
    n, height, width = bitmaps.shape
    flat = np.ascontiguousarray(bitmaps.transpose(0, 2, 1)).reshape(n, height * width).astype(np.int8)
    edges = np.diff(np.pad(flat, ((0, 0), (1, 1))), axis=1)
    row_in, start = np.nonzero(edges == 1)
    _, stop = np.nonzero(edges == -1)
    sizes = np.full(n, height, dtype=np.int64), np.full(n, width, dtype=np.int64)
    return _from_intervals(row_in.astype(np.int64), start.astype(np.int64), stop.astype(np.int64), *sizes)


def from_pixels(owner: IntArray, position: IntArray, height: IntArray, width: IntArray) -> MaskRuns:
    """Masks from their pixels: pixel i of mask `owner[i]` at column-major `position[i]`, sorted
    by owner then position, each once; mask o is `height[o]` x `width[o]`, a mask without pixels
    empty."""
    fresh = np.ones(len(position), dtype=bool)
    fresh[1:] = (owner[1:] != owner[:-1]) | (position[1:] > position[:-1] + 1)
    starts = np.flatnonzero(fresh)
    last = np.append(starts[1:], len(position))[: len(starts)] - 1
    return _from_intervals(
        owner[starts], position[starts], position[last] + 1, height.astype(np.int64), width.astype(np.int64)
    )


def united(masks: MaskRuns, owner: IntArray, n_owners: int) -> MaskRuns:
    """The masks of each owner united into one (pycocotools' `merge`): mask i belongs to
    `owner[i]` (ascending); every mask of an owner has its size; an owner without masks has none."""
    fg = foreground(masks)
    stride = int(np.maximum(masks.height * masks.width, 1).max(initial=1)) + 1
    line = owner[fg.row] * stride  # each owner's pixels on one line, owner after owner
    # The intervals come part by part, the parts owner by owner: only an owner of several parts
    # has its intervals out of order, and a stable sort of nearly sorted keys is quick.
    order = np.argsort(line + fg.start, kind="stable")
    key_start, key_stop = (line + fg.start)[order], (line + fg.stop)[order]
    reach = np.maximum.accumulate(key_stop) if len(key_stop) else key_stop
    # An interval starts a new united one where it begins after everything before it of its owner.
    fresh = np.ones(len(key_start), dtype=bool)
    fresh[1:] = key_start[1:] > reach[:-1]
    first = np.flatnonzero(fresh)
    last = np.append(first[1:], len(key_start))[: len(first)] - 1
    who = key_start[first] // stride
    height = np.zeros(n_owners, dtype=np.int64)
    width = np.zeros(n_owners, dtype=np.int64)
    height[owner] = masks.height
    width[owner] = masks.width
    return _from_intervals(who, key_start[first] - who * stride, reach[last] - who * stride, height, width)


def from_polygons(
    xy: FloatArray, part_offsets: IntArray, owner: IntArray, height: IntArray, width: IntArray
) -> MaskRuns:
    """Objects drawn as polygons, rasterised exactly as pycocotools' `frPoly` and united as its `merge`.

    Part i's points are `xy[part_offsets[i]:part_offsets[i + 1]]` (pixels, (M, 2), finite), and it
    belongs to object `owner[i]` (ascending) of size `height[o]` x `width[o]`: an object of several
    parts (COCO's list of polygons) is one mask.
    """
    parts = _rasterised(xy, part_offsets, height[owner], width[owner])
    return united(parts, owner, len(height))


def made(masks: Masks) -> MaskRuns:
    """The masks as runs: the rows still drawn as polygons rasterised (`from_polygons`), about
    `_POINT_BUDGET` points at a time."""
    if isinstance(masks, MaskRuns):
        return masks
    drawn = np.flatnonzero(masks.drawn)
    points = masks.part_offsets[masks.row_offsets[drawn + 1]] - masks.part_offsets[masks.row_offsets[drawn]]
    rasterised = MaskRuns.concatenate(
        [_rasterised_rows(masks[drawn[first:last]]) for first, last in _chunks(points, _POINT_BUDGET)]
    )
    if len(drawn) == len(masks):
        return rasterised
    source = np.arange(len(masks), dtype=np.int64)
    source[drawn] = len(masks) + np.arange(len(drawn))
    return MaskRuns.concatenate([masks.runs, rasterised])[source]


def _rasterised_rows(polygons: UnmadeMasks) -> MaskRuns:
    """Rows that are all polygons, rasterised."""
    owner = np.repeat(np.arange(len(polygons), dtype=np.int64), np.diff(polygons.row_offsets))
    return from_polygons(polygons.points, polygons.part_offsets, owner, polygons.height, polygons.width)


@dataclass(frozen=True)
class _Edges:
    """frPoly's edges, each walked from `t = 0` to `steps` along its longer axis (x where
    `along_x`): the coordinate along it is `base + t`, the other `moved(t)`. Where frPoly flips an
    edge (to walk it with x or y increasing), its points come in the other order; the pairs of
    neighbouring points are the same."""

    part: IntArray
    base: IntArray
    across: IntArray
    slope: FloatArray
    steps: IntArray
    along_x: BoolArray

    @classmethod
    def of(cls, xy: FloatArray, part_offsets: IntArray) -> _Edges:
        """The points scaled by 5 and rounded, and each point's edge to the next (the last back
        to the first of its part)."""
        scaled_x, scaled_y = _c_int(_SCALE * xy[:, 0] + 0.5), _c_int(_SCALE * xy[:, 1] + 0.5)
        nxt = np.arange(1, len(xy) + 1, dtype=np.int64)
        nxt[part_offsets[1:] - 1] = part_offsets[:-1]
        xs, ys, xe, ye = scaled_x, scaled_y, scaled_x[nxt], scaled_y[nxt]
        dx, dy = np.abs(xe - xs), np.abs(ys - ye)
        along_x = dx >= dy
        flip = (along_x & (xs > xe)) | (~along_x & (ys > ye))
        xs, xe = np.where(flip, xe, xs), np.where(flip, xs, xe)
        ys, ye = np.where(flip, ye, ys), np.where(flip, ys, ye)
        with np.errstate(invalid="ignore", divide="ignore"):
            slope = np.where(along_x, (ye - ys) / dx, (xe - xs) / dy)
        part = np.repeat(np.arange(len(part_offsets) - 1, dtype=np.int64), np.diff(part_offsets))
        base, across = np.where(along_x, xs, ys), np.where(along_x, ys, xs)
        return cls(part, base, across, slope, np.where(along_x, dx, dy), along_x)

    def moved(self, edge: IntArray, t: IntArray) -> IntArray:
        """The coordinate across edge `edge` at its step t, as frPoly computes it (the same float
        operations); never asked of an edge of length 0 (its slope is 0 / 0)."""
        return _c_int(self.across[edge] + self.slope[edge] * t + 0.5)


def _c_int(values: FloatArray) -> IntArray:
    """C's `(int)` of finite doubles: toward zero."""
    truncated: IntArray = values.astype(np.int64)
    return truncated


def _crossings(xy: FloatArray, part_offsets: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """frPoly's first step, the outline walked one step at a time, reduced to the steps that
    cross a column of pixel centres, where the smaller u of the step's two points is 2 modulo 5:
    the part of each, that smaller u and the smaller v. Walking along x, u moves by one a step:
    every 5th step crosses. Walking along y, u moves by at most one a step: the crossings are
    found (`_steep_crossings`). An edge's last point is the next edge's first (the float
    operations give back the whole coordinates they started from), so no step between edges
    crosses one."""
    edges = _Edges.of(xy, part_offsets)
    # Along x: the steps t -> t + 1 from the first t with base + t = 2 (mod 5), every 5th, up to steps - 1.
    first_t = np.mod(2 - edges.base, 5)
    count = np.where(edges.along_x & (first_t < edges.steps), (edges.steps - 1 - first_t) // 5 + 1, 0)
    x_edge, nth = _enumerated(count)
    x_t = first_t[x_edge] + 5 * nth
    x_v = np.minimum(edges.moved(x_edge, x_t), edges.moved(x_edge, x_t + 1))
    y_edge, y_t = _steep_crossings(edges)
    y_u = np.minimum(edges.moved(y_edge, y_t - 1), edges.moved(y_edge, y_t))
    part = np.concatenate((edges.part[x_edge], edges.part[y_edge]))
    u = np.concatenate((edges.base[x_edge] + x_t, y_u))
    v = np.concatenate((x_v, edges.base[y_edge] + y_t - 1))
    return part, u, v


def _enumerated(counts: IntArray) -> tuple[IntArray, IntArray]:
    """(row, k) for k in range(counts[row]), every row."""
    row = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    return row, np.arange(len(row), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)


# The steps on either side of a crossing's estimate searched for it: float rounding moves the
# estimate by at most one step.
_SEARCH: Final = np.arange(-2, 3)


def _steep_crossings(edges: _Edges) -> tuple[IntArray, IntArray]:
    """Walking along y, u moves by at most one a step (the slope is at most 1): for each m = 2
    (mod 5) it passes, the step t - 1 -> t where it goes between m and m + 1, found from its
    estimate and the exact u of the steps around it. The edge of each, and its t."""
    steep = np.flatnonzero(~edges.along_x & (edges.slope != 0))
    u_first = edges.moved(steep, np.zeros(len(steep), dtype=np.int64))
    u_last = edges.moved(steep, edges.steps[steep])
    low, high = np.minimum(u_first, u_last), np.maximum(u_first, u_last)
    first_m = np.maximum(low, 2) + np.mod(2 - np.maximum(low, 2), 5)
    count = np.where(first_m < high, (high - 1 - first_m) // 5 + 1, 0)
    which, nth = _enumerated(count)
    edge = steep[which]
    m = first_m[which] + 5 * nth
    slope = edges.slope[edge]
    rising = slope > 0
    ratio = (m + 0.5 - edges.across[edge]) / slope
    estimate = np.where(rising, np.ceil(ratio), np.floor(ratio) + 1).astype(np.int64)
    around = np.clip(estimate[:, None] + _SEARCH[None, :], 0, edges.steps[edge][:, None])
    u_around = edges.moved(np.repeat(edge, len(_SEARCH)), around.ravel()).reshape(around.shape)
    # u is monotone along the edge: the crossing is the first step past m (rising) or at m (falling).
    before = np.where(rising[:, None], u_around <= m[:, None], u_around > m[:, None])
    past = np.argmax(~before, axis=1)[:, None]
    t = np.maximum(np.take_along_axis(around, past, axis=1)[:, 0], 1)
    return edge, t


def _boundaries(
    crossings: tuple[IntArray, IntArray, IntArray], height: IntArray, width: IntArray
) -> tuple[IntArray, IntArray]:
    """frPoly's second step: where a step of the outline crosses a column of pixel centres
    (`(u + 0.5) / 5 - 0.5` whole, within the image), the pixel position at which the mask
    toggles. The part of each, and its position."""
    part, u, v = crossings
    column, off = np.divmod(u - 2, 5)
    keep = np.flatnonzero((off == 0) & (column >= 0) & (column <= width[part] - 1))
    part, column, v = part[keep], column[keep], v[keep]
    h = height[part]
    yd = np.ceil(np.clip((v.astype(np.float64) + 0.5) / _SCALE - 0.5, 0, h))
    position = column * h + yd.astype(np.int64)
    if (height * width).max(initial=0) >= 1 << 32:
        position %= 1 << 32  # C's uint arithmetic
    return part, position


def _rasterised(xy: FloatArray, part_offsets: IntArray, height: IntArray, width: IntArray) -> MaskRuns:
    """frPoly's runs of each part: its toggle positions sorted (and h x w), differenced, and a
    run of 0 length dropped together with the one after it (merged into the run before)."""
    n = len(height)
    part, position = _boundaries(_crossings(xy, part_offsets), height, width)
    # One sort by (part, position): positions are at most height x width.
    stride = int((height * width).max(initial=0)) + 1
    part_line = np.arange(n, dtype=np.int64) * stride
    key = np.sort(np.concatenate((part * stride + position, part_line + height * width)))
    # Every part has its last toggle (h x w): its first is where its line begins.
    starts = np.searchsorted(key, part_line)
    runs = np.diff(key, prepend=0)
    runs[starts] = key[starts] - part_line
    zero = runs == 0
    zero[starts] = False
    if not zero.any():
        return MaskRuns(
            runs.astype(np.uint32),
            np.append(starts, len(key)),
            height.astype(np.int64),
            width.astype(np.int64),
        )
    # A non-zero run after an odd number of zero runs (not counting a part's first) joins the run
    # before it; each part's first run always stands.
    index = np.arange(len(runs))
    last_standing = np.maximum.accumulate(np.where(zero, -1, index))
    zeros_before = index - 1 - np.concatenate(([-1], last_standing[:-1]))
    zeros_before[starts] = 0
    stands = ~zero & (zeros_before % 2 == 0)
    stands[starts] = True
    standing = np.flatnonzero(stands)
    counts = np.add.reduceat(runs, standing)
    offsets = np.append(np.searchsorted(standing, starts), len(standing)).astype(np.int64)
    return MaskRuns(counts.astype(np.uint32), offsets, height.astype(np.int64), width.astype(np.int64))


def from_strings(strings: list[bytes], height: IntArray, width: IntArray) -> tuple[MaskRuns, BoolArray]:
    """COCO's compressed `counts` strings decoded (pycocotools' `rleFrString`, in C:
    `kernels/src/rle_strings.c`), with whether each could be read (its characters in the
    alphabet, its last run complete, no run of more groups than a 32-bit count needs); one that
    could not has no runs, and the runs of one that could may still not be `well_formed`."""
    lengths = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
    bounds = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    return from_text(b"".join(strings), bounds, height, width)


def from_text(
    text: bytes | npt.NDArray[np.uint8], bounds: IntArray, height: IntArray, width: IntArray
) -> tuple[MaskRuns, BoolArray]:
    """`from_strings` of the strings `text[bounds[i]:bounds[i + 1]]`, one after the other."""
    counts, offsets, readable = rle_strings.decoded(text, bounds)
    return MaskRuns(counts, offsets, height.astype(np.int64), width.astype(np.int64)), readable


@dataclass(frozen=True)
class Measured:
    """Masks made ready to be compared, once per table: each mask's pixels cut at the columns
    into pieces (piece i: rows `y0[i]:y1[i]` of a column), and a slot for every column of each
    mask's extent (`slot_base[r]` is mask r's first) saying where its pieces are: those of slot
    s are `slot_ends[s]:slot_ends[s + 1]`. Two masks are then compared column by column over the
    columns their extents share, without a search."""

    pixels: IntArray
    height: IntArray
    width: IntArray
    extent: FloatArray
    y0: npt.NDArray[np.int32]
    y1: npt.NDArray[np.int32]
    slot_base: IntArray
    slot_ends: IntArray

    @classmethod
    def of(cls, masks: MaskRuns) -> Measured:
        """The masks measured, once per `MaskRuns` (a table's masks are measured by each search
        of its pairs: the matching, the near misses, the duplicates)."""
        found = _MEASURED.get(masks)
        if found is None:
            whole, rows = masks.selected_from or (masks, None)
            # A selection is measured from its whole when the whole is (or is worth) measuring.
            if rows is not None and (whole in _MEASURED or 2 * len(rows) >= len(whole)):
                found = cls.of(whole).rows(rows)
            else:
                found = cls._measured(masks)
            _MEASURED[masks] = found
        return found

    def rows(self, rows: IntArray) -> Measured:
        """The measures of masks `rows`: their slots point into the same pieces."""
        return Measured(
            self.pixels[rows],
            self.height[rows],
            self.width[rows],
            self.extent[rows],
            self.y0,
            self.y1,
            self.slot_base[rows],
            self.slot_ends,
        )

    @classmethod
    def _measured(cls, masks: MaskRuns) -> Measured:
        """Measured about `_RUN_BUDGET` runs at a time, so that the intervals' columns stay small."""
        chunks = [
            _measured_rows(masks[first:last]) for first, last in _chunks(np.diff(masks.offsets), _RUN_BUDGET)
        ]
        if not chunks:
            chunks = [_measured_rows(masks)]
        pixels, extent, y0, y1, pieces_per_slot = (
            np.concatenate(column) for column in zip(*chunks, strict=True)
        )
        columns = box_size(extent)[:, 0].astype(np.int64)
        slot_ends = np.zeros(len(pieces_per_slot) + 1, dtype=np.int64)
        np.cumsum(pieces_per_slot, out=slot_ends[1:])
        return cls(pixels, masks.height, masks.width, extent, y0, y1, np.cumsum(columns) - columns, slot_ends)


def _measured_rows(
    masks: MaskRuns,
) -> tuple[IntArray, FloatArray, npt.NDArray[np.int32], npt.NDArray[np.int32], IntArray]:
    """`Measured` of some masks: their pixels, extents, pieces (rows `y0:y1`) and the pieces in
    each column of each one's extent."""
    located = _Located.of(masks)
    n = len(masks)
    extent = _extent(located, n)
    row, column, y0, y1 = _pieces(located)
    pixels = np.bincount(row, weights=y1 - y0, minlength=n).astype(np.int64)
    columns = box_size(extent)[:, 0].astype(np.int64)
    slot = (np.cumsum(columns) - columns)[row] + column - extent[row, 0].astype(np.int64)
    pieces_per_slot = np.bincount(slot, minlength=int(columns.sum())).astype(np.int64)
    # A piece's rows are within its mask's height: 32 bits halve the columns kept per table.
    return pixels, extent, y0.astype(np.int32), y1.astype(np.int32), pieces_per_slot


@dataclass(frozen=True)
class _Located:
    """The masks' intervals, each with its mask's height and the columns it starts and ends in."""

    fg: Foreground
    height: IntArray
    column_first: IntArray
    column_last: IntArray

    @classmethod
    def of(cls, masks: MaskRuns) -> _Located:
        fg = foreground(masks)
        height = masks.height[fg.row]
        return cls(fg, height, fg.start // height, (fg.stop - 1) // height)


def _pieces(located: _Located) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """The masks' foreground cut at the columns, in order: the mask, column and rows `y0:y1`
    of each piece (an interval that goes on into the next column is a piece in each; most
    intervals are within one)."""
    fg, height, column_first, column_last = (
        located.fg,
        located.height,
        located.column_first,
        located.column_last,
    )
    if np.array_equal(column_first, column_last):
        top = column_first * height
        return fg.row, column_first, fg.start - top, fg.stop - top
    interval, k = _enumerated(column_last - column_first + 1)
    column = column_first[interval] + k
    top = column * height[interval]
    y0 = np.where(column == column_first[interval], fg.start[interval] - top, 0)
    y1 = np.where(column == column_last[interval], fg.stop[interval] - top, height[interval])
    return fg.row[interval], column, y0, y1


def extent(masks: MaskRuns) -> FloatArray:
    """(N, 4) the box of each mask's pixels, `[x_min, y_min, x_max + 1, y_max + 1]` (pycocotools'
    `toBbox` as corners); zeros for an empty mask or a row without one."""
    found = _MEASURED.get(masks)
    return found.extent if found is not None else _extent(_Located.of(masks), len(masks))


def _extent(located: _Located, n: int) -> FloatArray:
    """`extent` from the masks' intervals. An interval that goes on into the next column covers
    the bottom of one and the top of the other: its rows are all of them."""
    fg, height, column_first, column_last = (
        located.fg,
        located.height,
        located.column_first,
        located.column_last,
    )
    one_column = column_first == column_last
    top_of_column = column_first * height
    top = np.where(one_column, fg.start - top_of_column, 0)
    bottom = np.where(one_column, fg.stop - top_of_column, height)
    box = np.zeros((n, 4))
    first = np.searchsorted(fg.row, np.arange(n + 1))
    filled = np.flatnonzero(first[1:] > first[:-1])
    if len(filled):
        starts = first[filled]
        box[filled, 0] = column_first[starts]
        box[filled, 1] = np.minimum.reduceat(top, starts)
        box[filled, 2] = column_last[first[filled + 1] - 1] + 1
        box[filled, 3] = np.maximum.reduceat(bottom, starts)
    return box


# The tables' masks measured, while the tables live (`MaskRuns` compare and hash by identity).
_MEASURED: weakref.WeakKeyDictionary[MaskRuns, Measured] = weakref.WeakKeyDictionary()


def measured_iou(gt: Measured, pred: Measured, g: IntArray, p: IntArray, floor: float = 0.0) -> FloatArray:
    """(K,) the IoU of the masks `gt[g[k]]` and `pred[p[k]]` (pycocotools' `mask.iou`, not crowd):
    pixels in both over pixels in either, 0 where none are in both or the sizes differ. Each table
    is measured once (`Measured.of`), for all the pairs found chunk by chunk.

    A pair that cannot reach `floor` (its intersection is at most the smaller mask and the
    overlap of the extents) is left at 0 unmeasured; the others are compared column by column
    over the columns their extents share."""
    pixels_g, pixels_p = gt.pixels[g].astype(np.float64), pred.pixels[p].astype(np.float64)
    a, b = gt.extent[g], pred.extent[p]
    boxes = np.maximum(np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0]), 0) * np.maximum(
        np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1]), 0
    )
    bound = iou_of_intersection(np.minimum(np.minimum(pixels_g, pixels_p), boxes), pixels_g, pixels_p)
    same_size = (gt.height[g] == pred.height[p]) & (gt.width[g] == pred.width[p])
    near = np.flatnonzero(same_size & (bound > 0) & (bound >= floor))
    overlap = np.zeros(len(g))
    overlap[near] = _intersections(gt, pred, g[near], p[near])
    # Whole pixel counts, exact in float64: the same division as pycocotools'.
    return iou_of_intersection(overlap, pixels_g, pixels_p)


def _intersections(gt: Measured, pred: Measured, g: IntArray, p: IntArray) -> FloatArray:
    """(K,) the pixels masks `gt[g[k]]` and `pred[p[k]]` share: column by column over the
    columns both extents span, the overlap of every piece of one with every piece of the other
    in that column, about `_QUERY_BUDGET` columns at a time."""
    lo = np.maximum(gt.extent[g, 0], pred.extent[p, 0]).astype(np.int64)
    shared = np.maximum(np.minimum(gt.extent[g, 2], pred.extent[p, 2]).astype(np.int64) - lo, 0)
    # The slot of each pair's first shared column, on either side: the others follow it.
    slot_g = gt.slot_base[g] + lo - gt.extent[g, 0].astype(np.int64)
    slot_p = pred.slot_base[p] + lo - pred.extent[p, 0].astype(np.int64)
    found = np.zeros(len(g))
    for first, last in _chunks(shared, _QUERY_BUDGET):
        counts = shared[first:last]
        found[first:last] = _shared_pixels(
            gt, pred, _ranges(slot_g[first:last], counts), _ranges(slot_p[first:last], counts), counts
        )
    return found


def _ranges(start: IntArray, counts: IntArray) -> IntArray:
    """`start[i] + k` for k in range(counts[i]), every i, in order."""
    ends = np.cumsum(counts)
    values: IntArray = np.repeat(start - (ends - counts), counts) + np.arange(
        int(ends[-1]) if len(ends) else 0
    )
    return values


def _shared_pixels(
    gt: Measured, pred: Measured, slot_g: IntArray, slot_p: IntArray, columns: IntArray
) -> FloatArray:
    """(K,) the pixels pair k shares over its `columns[k]` columns, whose slots on either side
    are the next `columns[k]` of `slot_g` and `slot_p`."""
    start_g, start_p = gt.slot_ends[slot_g], pred.slot_ends[slot_p]
    count_g, count_p = gt.slot_ends[slot_g + 1] - start_g, pred.slot_ends[slot_p + 1] - start_p
    # Most columns hold one piece of each: those are paired as they are, the others piece by piece.
    inside = np.zeros(len(slot_g), dtype=np.int64)
    single = np.flatnonzero((count_g == 1) & (count_p == 1))
    inside[single] = _overlaps(gt, pred, start_g[single], start_p[single])
    several = np.flatnonzero(count_g * count_p > 1)
    both, nth = _enumerated(count_g[several] * count_p[several])
    at = several[both]
    overlap = _overlaps(gt, pred, start_g[at] + nth // count_p[at], start_p[at] + nth % count_p[at])
    np.add.at(inside, at, overlap)
    ends = np.cumsum(columns)
    found = np.zeros(len(columns))
    has = np.flatnonzero(columns > 0)
    if len(has):
        found[has] = np.add.reduceat(inside, (ends - columns)[has])
    return found


def _overlaps(gt: Measured, pred: Measured, piece_g: IntArray, piece_p: IntArray) -> IntArray:
    """The rows pieces `piece_g` and `piece_p` of one column share."""
    inside = np.minimum(gt.y1[piece_g], pred.y1[piece_p]) - np.maximum(gt.y0[piece_g], pred.y0[piece_p])
    shared: IntArray = np.maximum(inside, 0).astype(np.int64)
    return shared


def _chunks(counts: IntArray, budget: int) -> list[tuple[int, int]]:
    """Consecutive ranges of rows whose counts add up to about `budget` (at least one row each)."""
    if not len(counts):
        return []
    total = np.cumsum(counts)
    cuts = np.searchsorted(total, np.arange(budget, int(total[-1]), budget), side="right")
    bounds = np.unique(np.concatenate(([0], cuts, [len(counts)])))
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))


# Pixels moved at once by `transposed`: its per-pixel columns stay a few tens of MB.
_PIXEL_BUDGET: Final = 1 << 22


def transposed(masks: MaskRuns) -> MaskRuns:
    """Each mask transposed: its pixel (x, y) at (y, x), its height and width swapped; a row
    without a mask keeps none. Runs a tool counted row by row (row-major) over a height x width
    image are, read column by column as COCO reads runs, a width x height mask whose transpose is
    the one meant. Pixel by pixel, about `_PIXEL_BUDGET` pixels at a time."""
    present = np.flatnonzero(masks.present)
    if len(present) < len(masks):
        others = np.setdiff1d(np.arange(len(masks)), present)
        found = MaskRuns.concatenate([transposed(masks[present]), MaskRuns.none(len(others))])
        return found[np.argsort(np.concatenate((present, others)), kind="stable")]
    fg = foreground(masks)
    lengths = fg.stop - fg.start
    pixels = np.bincount(fg.row, weights=lengths, minlength=len(masks)).astype(np.int64)
    firsts = np.searchsorted(fg.row, np.arange(len(masks) + 1))
    parts = []
    for first, last in _chunks(pixels, _PIXEL_BUDGET):
        at = slice(int(firsts[first]), int(firsts[last]))
        count = lengths[at]
        owner = np.repeat(fg.row[at], count)
        offset = np.repeat(fg.start[at] - (np.cumsum(count) - count), count)
        position = offset + np.arange(len(owner), dtype=np.int64)
        height, width = masks.height[owner], masks.width[owner]
        column, row = np.divmod(position, height)
        moved: IntArray = row * width + column
        # one sort by (owner, position): the owners are few, their positions below height x width
        stride = int((height * width).max(initial=0)) + 1
        order = np.argsort((owner - first) * stride + moved, kind="stable")
        sizes = masks.width[first:last], masks.height[first:last]
        parts.append(from_pixels(owner[order] - first, moved[order], *sizes))
    return MaskRuns.concatenate(parts)
