"""Instance masks as runs (`MaskRuns`, COCO's uncompressed RLE): made, measured and compared.

Every function is vectorised over all the masks (or pairs) it is given, with no Python loop per
mask, run or pair; nothing here reads a file. The conventions are pycocotools', so that every
figure agrees with it bit for bit:

- `from_polygons` rasterises as pycocotools' `frPoly` does (points scaled by 5, each edge walked
  pixel by pixel, the crossings of pixel centres kept), and the parts of one object are united as
  `merge` does;
- `from_strings` decodes COCO's compressed `counts` strings (`rleFrString`);
- `measured` gives each mask's `area` and its `extent`, `toBbox` as a box `[x_min, y_min, x_max,
  y_max]` over the pixels' edges, in C (`kernels/src/mask_iou.c`), where the IoU of pairs of
  masks is computed too (`kernels.mask_iou.pair_ious`, pycocotools' `mask.iou`, non-crowd).

A mask's foreground is a set of half-open intervals of pixel positions, position `x * height +
y` (column-major) (`foreground`).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from handler.boxes import BoolArray, FloatArray, IntArray, MaskRuns, Masks, UnmadeMasks
from handler.kernels import mask_iou, rle_strings
from handler.kernels.mask_iou import MeasuredRuns

# pycocotools' frPoly walks the outline at 5 points per pixel.
_SCALE: Final = 5.0
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
    counts, offsets, readable = rle_strings.decoded(b"".join(strings), bounds)
    return MaskRuns(counts, offsets, height.astype(np.int64), width.astype(np.int64)), readable


def measured(masks: MaskRuns) -> MeasuredRuns:
    """The masks with each one's area (pycocotools' `area`) and extent (`extent`), for the IoU of
    all the pairs they are in (`kernels.mask_iou.pair_ious`): once per `MaskRuns` while it lives
    (a table's masks are in each search of its pairs: the matching, the near misses, the
    duplicates)."""
    found = _MEASURED.get(masks)
    if found is None:
        found = _MEASURED[masks] = mask_iou.measured(masks.counts, masks.offsets, masks.height, masks.width)
    return found


# The tables' masks measured, while the tables live (`MaskRuns` compare and hash by identity).
_MEASURED: weakref.WeakKeyDictionary[MaskRuns, MeasuredRuns] = weakref.WeakKeyDictionary()


def extent(masks: MaskRuns) -> FloatArray:
    """(N, 4) the box of each mask's pixels, `[x_min, y_min, x_max + 1, y_max + 1]` (pycocotools'
    `toBbox` as corners); zeros for an empty mask or a row without one."""
    return measured(masks).extent


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
