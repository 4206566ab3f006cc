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
y` (column-major): the intervals are what the measures work on (`foreground`).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import cached_property
from typing import Final

import numpy as np
import numpy.typing as npt

from handler.boxes import BoolArray, FloatArray, IntArray, MaskRuns, Masks, UnmadeMasks, ragged_take
from handler.engine.iou import iou_of_intersection

# pycocotools' frPoly walks the outline at 5 points per pixel.
_SCALE: Final = 5.0
# (int) of a NaN in C on x86 (a polygon edge of length 0 divides 0 by 0): what frPoly then writes.
_C_INT_OF_NAN: Final = np.iinfo(np.int32).min
# Query points gathered at once by `measured_iou`: a few MB of columns.
_QUERY_BUDGET: Final = 1 << 20
# Polygon points rasterised at once by `made`: the outline's per-step columns stay a few tens of MB.
_POINT_BUDGET: Final = 1 << 17
# The characters of a compressed counts string: '0' + six bits.
_FIRST_CHAR: Final = 48
_CHARS: Final = 64


@dataclass(frozen=True)
class Foreground:
    """The foreground of masks as half-open intervals of column-major pixel positions, each
    mask's in order: mask `row[i]` covers `start[i]:stop[i]`; `first[r]:first[r + 1]` are mask
    r's intervals."""

    row: IntArray
    start: IntArray
    stop: IntArray
    first: IntArray


def _run_ends(masks: MaskRuns) -> tuple[IntArray, IntArray]:
    """Each run's end position within its mask (the sum of its mask's runs up to it) and its
    place among its mask's runs."""
    total = np.cumsum(masks.counts, dtype=np.int64)
    lengths = np.diff(masks.offsets)
    base = np.concatenate(([0], total))[masks.offsets[:-1]]
    ends: IntArray = total - np.repeat(base, lengths)
    place: IntArray = np.arange(len(total), dtype=np.int64) - np.repeat(masks.offsets[:-1], lengths)
    return ends, place


def foreground(masks: MaskRuns) -> Foreground:
    """The intervals of each mask's pixels (its runs of 1s that are not empty)."""
    ends, place = _run_ends(masks)
    ones = np.flatnonzero((place % 2 == 1) & (masks.counts > 0))
    row = np.repeat(np.arange(len(masks), dtype=np.int64), np.diff(masks.offsets))[ones]
    first = np.searchsorted(row, np.arange(len(masks) + 1)).astype(np.int64)
    return Foreground(row, ends[ones - 1], ends[ones], first)


def extent(masks: MaskRuns) -> FloatArray:
    """(N, 4) the box of each mask's pixels, `[x_min, y_min, x_max + 1, y_max + 1]` (pycocotools'
    `toBbox` as corners); zeros for an empty mask or a row without one."""
    return Measured.of(masks).extent


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
    size = np.maximum(masks.height * masks.width, 1)
    stride = int(size.max(initial=1)) + 1
    who = owner[fg.row]
    order = np.lexsort((fg.start, who))
    who, start, stop = who[order], fg.start[order], fg.stop[order]
    key_stop = who * stride + stop
    reach = np.maximum.accumulate(key_stop) if len(key_stop) else key_stop
    # An interval starts a new united one where it begins after everything before it of its owner.
    fresh = np.ones(len(start), dtype=bool)
    fresh[1:] = who[1:] * stride + start[1:] > reach[:-1]
    group = np.cumsum(fresh) - 1
    united_start = start[fresh]
    united_stop = np.zeros(int(fresh.sum()), dtype=np.int64)
    np.maximum.at(united_stop, group, stop)
    height = np.zeros(n_owners, dtype=np.int64)
    width = np.zeros(n_owners, dtype=np.int64)
    height[owner] = masks.height
    width[owner] = masks.width
    return _from_intervals(who[fresh], united_start, united_stop, height, width)


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
    source = np.arange(len(masks), dtype=np.int64)
    source[drawn] = len(masks) + np.arange(len(drawn))
    return MaskRuns.concatenate([masks.runs, rasterised])[source]


def _rasterised_rows(polygons: UnmadeMasks) -> MaskRuns:
    """Rows that are all polygons, rasterised."""
    owner = np.repeat(np.arange(len(polygons), dtype=np.int64), np.diff(polygons.row_offsets))
    return from_polygons(polygons.points, polygons.part_offsets, owner, polygons.height, polygons.width)


def _c_int(values: FloatArray) -> IntArray:
    """C's `(int)` of doubles: toward zero, a NaN as x86 makes it."""
    with np.errstate(invalid="ignore"):
        truncated: IntArray = np.where(
            np.isnan(values), _C_INT_OF_NAN, np.trunc(np.nan_to_num(values))
        ).astype(np.int64)
    return truncated


@dataclass(frozen=True)
class _Edges:
    """frPoly's edges, each walked from `t = 0` to `steps` along its longer axis (x where
    `along_x`) from (xs, ys) with `slope`: its point t is `_walked(t)`. Where frPoly flips an edge
    (to walk it with x or y increasing), its points come in the other order; the pairs of
    neighbouring points are the same."""

    part: IntArray
    xs: IntArray
    ys: IntArray
    slope: FloatArray
    steps: IntArray
    along_x: BoolArray
    flip: BoolArray

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
        return cls(part, xs, ys, slope, np.where(along_x, dx, dy), along_x, flip)

    def walked(self, edge: IntArray, t: IntArray) -> tuple[IntArray, IntArray]:
        """Point t of each edge as frPoly computes it (the same float operations)."""
        with np.errstate(invalid="ignore"):
            moved = _c_int(
                np.where(self.along_x[edge], self.ys[edge], self.xs[edge]) + self.slope[edge] * t + 0.5
            )
        u = np.where(self.along_x[edge], t + self.xs[edge], moved)
        v = np.where(self.along_x[edge], moved, t + self.ys[edge])
        return u, v


def _outline(
    xy: FloatArray, part_offsets: IntArray
) -> tuple[IntArray, IntArray, IntArray, IntArray, IntArray]:
    """frPoly's first step, the outline walked one step at a time, as the pairs of neighbouring
    points that can cross a column of pixel centres: the part of each pair and its two points'
    u, v. Walking along x, a step crosses one where its smaller u is 2 modulo 5, so only those
    steps are made; walking along y, every step is; and each edge's last point with the next
    edge's first."""
    edges = _Edges.of(xy, part_offsets)
    # Along x: the steps t -> t + 1 from the first t with xs + t = 2 (mod 5), every 5th, up to steps - 1.
    first_t = np.mod(2 - edges.xs, 5)
    crossing = np.where(edges.along_x & (first_t < edges.steps), (edges.steps - 1 - first_t) // 5 + 1, 0)
    x_edge, nth = _enumerated(crossing)
    x_t = first_t[x_edge] + 5 * nth
    y_edge, y_t = _steep_crossings(edges)
    # Each edge's last point and the next edge's first, within a part.
    joined = np.flatnonzero(edges.part[1:] == edges.part[:-1])
    last_t = np.where(edges.flip[joined], 0, edges.steps[joined])
    first_next = np.where(edges.flip[joined + 1], edges.steps[joined + 1], 0)
    edge_a = np.concatenate((x_edge, y_edge, joined))
    edge_b = np.concatenate((x_edge, y_edge, joined + 1))
    t_a = np.concatenate((x_t, y_t - 1, last_t))
    t_b = np.concatenate((x_t + 1, y_t, first_next))
    u_a, v_a = edges.walked(edge_a, t_a)
    u_b, v_b = edges.walked(edge_b, t_b)
    return edges.part[edge_a], u_a, v_a, u_b, v_b


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
    steep = ~edges.along_x & (edges.slope != 0)
    everything = np.arange(len(edges.xs), dtype=np.int64)
    u_first = edges.walked(everything, np.zeros(len(everything), dtype=np.int64))[0]
    u_last = edges.walked(everything, edges.steps)[0]
    low, high = np.minimum(u_first, u_last), np.maximum(u_first, u_last)
    first_m = np.maximum(low, 2) + np.mod(2 - np.maximum(low, 2), 5)
    count = np.where(steep & (first_m < high), (high - 1 - first_m) // 5 + 1, 0)
    edge, nth = _enumerated(count)
    m = first_m[edge] + 5 * nth
    slope, rising = edges.slope[edge], edges.slope[edge] > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = (m + 0.5 - edges.xs[edge]) / slope
    estimate = np.where(rising, np.ceil(ratio), np.floor(ratio) + 1).astype(np.int64)
    around = np.clip(estimate[:, None] + _SEARCH[None, :], 0, edges.steps[edge][:, None])
    u_around = edges.walked(np.repeat(edge, len(_SEARCH)), around.ravel())[0].reshape(around.shape)
    # u is monotone along the edge: the crossing is the first step past m (rising) or at m (falling).
    before = np.where(rising[:, None], u_around <= m[:, None], u_around > m[:, None])
    past = np.argmax(~before, axis=1)[:, None]
    t = np.maximum(np.take_along_axis(around, past, axis=1)[:, 0], 1)
    return edge, t


def _boundaries(
    pairs: tuple[IntArray, IntArray, IntArray, IntArray, IntArray], height: IntArray, width: IntArray
) -> tuple[IntArray, IntArray]:
    """frPoly's second step: where a step of the outline crosses a column of pixel centres, the
    pixel position at which the mask toggles. The part of each, and its position."""
    part, u_a, v_a, u_b, v_b = pairs
    changed = np.flatnonzero(u_a != u_b)
    part, u_a, v_a, u_b, v_b = part[changed], u_a[changed], v_a[changed], u_b[changed], v_b[changed]
    h, w = height[part], width[part]
    xd = (np.minimum(u_a, u_b).astype(np.float64) + 0.5) / _SCALE - 0.5
    keep = (np.floor(xd) == xd) & (xd >= 0) & (xd <= w - 1)
    yd = (np.minimum(v_a, v_b).astype(np.float64) + 0.5) / _SCALE - 0.5
    yd = np.ceil(np.clip(yd, 0, h))
    position = (xd.astype(np.int64) * h + yd.astype(np.int64)) % (1 << 32)  # C's uint arithmetic
    return part[keep], position[keep]


def _rasterised(xy: FloatArray, part_offsets: IntArray, height: IntArray, width: IntArray) -> MaskRuns:
    """frPoly's runs of each part: its toggle positions sorted (and h x w), differenced, and a
    run of 0 length dropped together with the one after it (merged into the run before)."""
    n = len(height)
    part, position = _boundaries(_outline(xy, part_offsets), height, width)
    part = np.concatenate((part, np.arange(n, dtype=np.int64)))
    position = np.concatenate((position, height * width))
    # One sort by (part, position): positions are at most height x width.
    order = np.argsort(part * (int((height * width).max(initial=0)) + 1) + position, kind="stable")
    part, position = part[order], position[order]
    first = np.ones(len(part), dtype=bool)
    first[1:] = part[1:] != part[:-1]
    runs = np.where(first, position, position - np.concatenate(([0], position[:-1])))
    # A non-zero run after an odd number of zero runs (not counting a part's first) joins the run
    # before it; each part's first run always stands.
    zero = (runs == 0) & ~first
    index = np.arange(len(runs))
    last_standing = np.maximum.accumulate(np.where(zero, -1, index))
    zeros_before = index - 1 - np.concatenate(([-1], last_standing[:-1]))
    zeros_before[first] = 0
    stands = first | (~zero & (zeros_before % 2 == 0))
    group = np.cumsum(stands) - 1
    counts = np.bincount(group, weights=runs).astype(np.int64)
    per_part = np.bincount(part[stands], minlength=n)
    offsets = np.concatenate(([0], np.cumsum(per_part))).astype(np.int64)
    return MaskRuns(counts.astype(np.uint32), offsets, height.astype(np.int64), width.astype(np.int64))


def from_strings(strings: list[bytes], height: IntArray, width: IntArray) -> tuple[MaskRuns, BoolArray]:
    """COCO's compressed `counts` strings decoded (pycocotools' `rleFrString`): each run written
    in 5-bit groups, a sixth bit saying another group follows, the last group's fifth bit the
    sign; from the fourth run on, the difference from the run two before. With each string,
    whether it could be read (its characters in the alphabet, its last run complete); the runs
    of one that could may still not be `well_formed`."""
    lengths = np.fromiter((len(s) for s in strings), dtype=np.int64, count=len(strings))
    string_of = np.repeat(np.arange(len(strings), dtype=np.int64), lengths)
    chars = np.frombuffer(b"".join(strings), dtype=np.uint8).astype(np.int64) - _FIRST_CHAR
    string_last = np.zeros(len(chars), dtype=bool)
    string_last[np.cumsum(lengths)[lengths > 0] - 1] = True
    bad = ((chars < 0) | (chars >= _CHARS)) | (string_last & ((chars & 0x20) != 0))
    readable: BoolArray = (lengths > 0) & (np.bincount(string_of, weights=bad, minlength=len(strings)) == 0)
    value_end = np.flatnonzero(((chars & 0x20) == 0) | string_last)
    value_start = np.concatenate(([0], value_end[:-1] + 1))
    value_of = np.repeat(np.arange(len(value_end)), value_end - value_start + 1)
    shift = np.minimum(5 * (np.arange(len(chars)) - value_start[value_of]), 60)
    value = np.bincount(value_of, weights=(chars & 0x1F) << shift, minlength=len(value_end)).astype(np.int64)
    sign_bit = np.minimum(5 * (value_end - value_start + 1), 60)
    value -= np.where((chars[value_end] & 0x10) != 0, np.left_shift(1, sign_bit), 0)
    owner = string_of[value_end]
    per_string = np.bincount(owner, minlength=len(strings))
    place = np.arange(len(value)) - np.repeat(np.cumsum(per_string) - per_string, per_string)
    counts = _two_apart_sums(value, owner, place)
    out_of_range = (counts < 0) | (counts >= 1 << 32)
    readable &= np.bincount(owner, weights=out_of_range, minlength=len(strings)) == 0
    offsets = np.concatenate(([0], np.cumsum(per_string))).astype(np.int64)
    runs = MaskRuns(
        np.where(out_of_range, 0, counts).astype(np.uint32),
        offsets,
        height.astype(np.int64),
        width.astype(np.int64),
    )
    return runs, readable


def _two_apart_sums(value: IntArray, owner: IntArray, place: IntArray) -> IntArray:
    """rleFrString's `if (m > 2) x += cnts[m - 2]`: from the fourth value of a string on, the
    running sum along its odd places from the second and its even places from the third: one
    running sum per parity over all the strings, less its value where each string starts."""
    counts = value.copy()
    starts = np.flatnonzero(place == 0)
    for chain in (place % 2 == 1, (place % 2 == 0) & (place > 0)):
        running = np.cumsum(np.where(chain, value, 0))
        before = (running - np.where(chain, value, 0))[starts]  # the sum of the strings before
        counts[chain] = (running - np.repeat(before, np.diff(np.append(starts, len(value)))))[chain]
    return counts


@dataclass(frozen=True)
class Measured:
    """Masks made ready to be compared, once per table: their intervals, their pixels (each one's
    area), and the intervals of all of them on one line (mask after mask, `stride` positions each) with the
    pixels before each, so that the pixels of a mask before any position are one search."""

    foreground: Foreground
    pixels: IntArray
    height: IntArray
    width: IntArray
    stride: int
    key_start: IntArray
    key_stop: IntArray
    before: IntArray

    @classmethod
    def of(cls, masks: MaskRuns) -> Measured:
        """The masks measured, once per `MaskRuns` (a table's masks are measured by each search
        of its pairs: the matching, the near misses, the duplicates)."""
        found = _MEASURED.get(masks)
        if found is None:
            found = _MEASURED[masks] = cls._measured(masks)
        return found

    @classmethod
    def _measured(cls, masks: MaskRuns) -> Measured:
        fg = foreground(masks)
        stride = int((masks.height * masks.width).max(initial=0)) + 1
        lengths = fg.stop - fg.start
        pixels = np.bincount(fg.row, weights=lengths, minlength=len(masks)).astype(np.int64)
        base = fg.row * stride
        before = np.concatenate(([0], np.cumsum(lengths)))
        return cls(fg, pixels, masks.height, masks.width, stride, base + fg.start, base + fg.stop, before)

    @cached_property
    def extent(self) -> FloatArray:
        """`extent` of the masks (once). A run that goes on into the next column covers the bottom of one
        and the top of the other: its rows are all of them."""
        fg = self.foreground
        height = self.height[fg.row]
        last = fg.stop - 1
        column_first, column_last = fg.start // height, last // height
        one_column = column_first == column_last
        top = np.where(one_column, fg.start % height, 0)
        bottom = np.where(one_column, last % height, height - 1)
        box = np.zeros((len(self.pixels), 4))
        filled = np.flatnonzero(np.diff(fg.first) > 0)
        starts = fg.first[filled]
        if len(starts):
            box[filled, 0] = np.minimum.reduceat(column_first, starts)
            box[filled, 1] = np.minimum.reduceat(top, starts)
            box[filled, 2] = np.maximum.reduceat(column_last, starts) + 1
            box[filled, 3] = np.maximum.reduceat(bottom, starts) + 1
        return box

    def pixels_before(self, row: IntArray, position: IntArray) -> IntArray:
        """The pixels of masks `row` before `position`, counted from the first mask's first."""
        at = row * self.stride + position
        whole = np.searchsorted(self.key_stop, at, side="right")
        inside = np.minimum(whole, max(len(self.key_start) - 1, 0))
        partial = np.where(whole < len(self.key_start), np.maximum(at - self.key_start[inside], 0), 0)
        counted: IntArray = self.before[whole] + partial
        return counted


# The tables' masks measured, while the tables live (`MaskRuns` compare and hash by identity).
_MEASURED: weakref.WeakKeyDictionary[MaskRuns, Measured] = weakref.WeakKeyDictionary()


def measured_iou(gt: Measured, pred: Measured, g: IntArray, p: IntArray) -> FloatArray:
    """(K,) the IoU of the masks `gt[g[k]]` and `pred[p[k]]` (pycocotools' `mask.iou`, not crowd):
    pixels in both over pixels in either, 0 where none are in both or the sizes differ. Each table
    is measured once (`Measured.of`), for all the pairs found chunk by chunk.

    Each pair's intersection is measured from the side with fewer intervals: the pixels of the
    other mask inside each of its intervals."""
    counts_gt, counts_pred = np.diff(gt.foreground.first)[g], np.diff(pred.foreground.first)[p]
    from_gt = counts_gt <= counts_pred
    overlap = np.zeros(len(g), dtype=np.int64)
    for query, target, rows_q, rows_t, chosen in ((gt, pred, g, p, from_gt), (pred, gt, p, g, ~from_gt)):
        at = np.flatnonzero(chosen)
        overlap[at] = _intersections(query, target, rows_q[at], rows_t[at])
    same_size = (gt.height[g] == pred.height[p]) & (gt.width[g] == pred.width[p])
    overlap[~same_size] = 0
    # Whole pixel counts, exact in float64: the same division as pycocotools'.
    return iou_of_intersection(
        overlap.astype(np.float64), gt.pixels[g].astype(np.float64), pred.pixels[p].astype(np.float64)
    )


def _intersections(query: Measured, target: Measured, rows_q: IntArray, rows_t: IntArray) -> IntArray:
    """(K,) pixels of mask `rows_t[k]` of `target` inside the intervals of mask `rows_q[k]` of
    `query`, in chunks of about `_QUERY_BUDGET` intervals."""
    fg = query.foreground
    found = np.zeros(len(rows_q), dtype=np.int64)
    for first, last in _chunks(np.diff(fg.first)[rows_q], _QUERY_BUDGET):
        interval, bounds = ragged_take(fg.first, rows_q[first:last])
        pair = np.repeat(np.arange(last - first), np.diff(bounds))
        rows = rows_t[first:last][pair]
        inside = target.pixels_before(rows, fg.stop[interval]) - target.pixels_before(
            rows, fg.start[interval]
        )
        found[first:last] = np.bincount(pair, weights=inside, minlength=last - first).astype(np.int64)
    return found


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
    parts = []
    for first, last in _chunks(pixels, _PIXEL_BUDGET):
        at = slice(int(fg.first[first]), int(fg.first[last]))
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
