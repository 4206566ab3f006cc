"""Instance masks as runs (`MaskRuns`, COCO's uncompressed RLE): made, measured and compared.

Every function is vectorised over all the masks (or pairs) it is given, with no Python loop per
mask, run or pair; nothing here reads a file. The conventions are pycocotools', so that every
figure agrees with it bit for bit:

- `from_polygons` rasterises as pycocotools' `frPoly` does (points scaled by 5, the steps of each
  edge that cross a column of pixel centres kept), and the parts of one object are united as
  `merge` does, in C (`kernels/src/polygons.c`);
- `from_text` decodes COCO's compressed `counts` strings (`rleFrString`);
- `measured` gives each mask's `area` and its `extent`, `toBbox` as a box `[x_min, y_min, x_max,
  y_max]` over the pixels' edges, in C (`kernels/src/mask_iou.c`), where the IoU of pairs of
  masks is computed too (`kernels.mask_iou.pair_ious`, pycocotools' `mask.iou`, non-crowd).

A mask's foreground is a set of half-open intervals of pixel positions, position `x * height +
y` (column-major) (`foreground`).
"""

from __future__ import annotations

import weakref
from typing import Final

import msgspec
import numpy as np
import numpy.typing as npt

from handler.boxes import BoolArray, FloatArray, IntArray, MaskRuns, Masks
from handler.forked import worker_count
from handler.kernels import mask_iou, polygons, rle_strings, run_store
from handler.kernels.mask_iou import MeasuredRuns

# The work from which a kernel's call is shared by two threads (below, a thread costs more than it
# saves): polygon points rasterised, runs measured, pairs of masks measured.
THREADED_POINTS: Final = 1 << 16
THREADED_RUNS: Final = 1 << 16
THREADED_PAIRS: Final = 1 << 13


def _two_threads(work: int, threshold: int) -> bool:
    """Whether a kernel call of this much work is shared by two threads (from `threshold`, on two
    cores or more)."""
    return work >= threshold and worker_count(None) >= 2


class Foreground(msgspec.Struct, frozen=True):
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
    total = mask_iou.run_totals(masks.counts, masks.offsets)
    fits: BoolArray = (np.diff(masks.offsets) > 0) & (total == masks.height * masks.width)
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
    """Objects drawn as polygons, rasterised exactly as pycocotools' `frPoly` and united as its
    `merge` (in C: `kernels/src/polygons.c`).

    Part i's points are `xy[part_offsets[i]:part_offsets[i + 1]]` (pixels, (M, 2), finite), and it
    belongs to object `owner[i]` (ascending) of size `height[o]` x `width[o]`: an object of several
    parts (COCO's list of polygons) is one mask. An object on an image of no pixels, or of more
    than COCO's 32-bit counts hold, has no mask.
    """
    row_offsets = np.searchsorted(owner, np.arange(len(height) + 1)).astype(np.int64)
    return _rasterised(xy, part_offsets, row_offsets, height, width)


def made(masks: Masks) -> MaskRuns:
    """The masks as runs: the rows still drawn as polygons rasterised (`from_polygons`)."""
    if isinstance(masks, MaskRuns):
        return masks
    drawn = np.flatnonzero(masks.drawn)
    if not len(drawn):  # runs already (a results list's RLE read in pieces): not copied
        return masks.runs
    if len(drawn) == len(masks):
        return _rasterised(masks.points, masks.part_offsets, masks.row_offsets, masks.height, masks.width)
    polygons = masks[drawn]
    rasterised = _rasterised(
        polygons.points, polygons.part_offsets, polygons.row_offsets, polygons.height, polygons.width
    )
    source = np.arange(len(masks), dtype=np.int64)
    source[drawn] = len(masks) + np.arange(len(drawn))
    return MaskRuns.concatenate([masks.runs, rasterised])[source]


def _rasterised(
    xy: FloatArray, part_offsets: IntArray, row_offsets: IntArray, height: IntArray, width: IntArray
) -> MaskRuns:
    """Object i, the parts `row_offsets[i]:row_offsets[i + 1]`, rasterised; one that cannot be
    drawn gets no mask (its size 0 x 0, as a row without one)."""
    halves = _two_threads(len(xy), THREADED_POINTS)
    counts, lengths = polygons.rasterised(xy, part_offsets, row_offsets, height, width, halves=halves)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    drawn = lengths > 0
    sizes = np.where(drawn, height, 0).astype(np.int64), np.where(drawn, width, 0).astype(np.int64)
    return MaskRuns(counts, offsets, *sizes)


def from_text(
    text: bytes | npt.NDArray[np.uint8], bounds: IntArray, height: IntArray, width: IntArray
) -> tuple[MaskRuns, BoolArray]:
    """COCO's compressed `counts` strings `text[bounds[i]:bounds[i + 1]]` decoded (pycocotools'
    `rleFrString`, in C: `kernels/src/rle_strings.c`), with whether each could be read (its
    characters in the alphabet, its last run complete, no run of more groups than a 32-bit count
    needs); one that could not has no runs, and the runs of one that could may still not be
    `well_formed`."""
    counts, offsets, readable = rle_strings.decoded(text, bounds)
    runs = MaskRuns(*run_store.narrowed(counts, offsets), height.astype(np.int64), width.astype(np.int64))
    return runs, readable


def measured(masks: MaskRuns) -> MeasuredRuns:
    """The masks with each one's area (pycocotools' `area`) and extent (`extent`), for the IoU of
    all the pairs they are in (`kernels.mask_iou.pair_ious`): once per `MaskRuns` while it lives
    (a table's masks are in each search of its pairs: the matching, the near misses, the
    duplicates)."""
    found = _MEASURED.get(masks)
    if found is None:
        halves = _two_threads(len(masks.counts), THREADED_RUNS)
        found = mask_iou.measured(masks.counts, masks.offsets, masks.height, masks.width, halves)
        _MEASURED[masks] = found
    return found


def pair_ious(gt: MeasuredRuns, pred: MeasuredRuns, g: IntArray, p: IntArray, floor: float) -> FloatArray:
    """`kernels.mask_iou.pair_ious` of these pairs, on two threads when there are many."""
    return mask_iou.pair_ious(gt, pred, g, p, floor, _two_threads(len(g), THREADED_PAIRS))


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
