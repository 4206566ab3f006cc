"""Masks (`MaskRuns`: column-major runs) written in the labeling tools' own encodings, for the
exports, over all the masks at once: numpy over their runs, never a Python step per pixel or per
run, and never a bitmap.

- COCO's compressed `counts` string (pycocotools' `rleToString`, what `from_text` reads);
- the masks' horizontal runs (`row_runs`), row-major, from which are made:
  - Label Studio's brush `rle`: the thi.ng rle-pack bit stream of the image's RGBA picture, every
    channel 255 on the mask (label_studio_sdk.converter.brush's `mask2rle`), written as repeated
    values only;
  - CVAT's `<mask rle left top width height>`: row-major runs over the mask's crop, 0s first
    (datumaro's CVAT plugin reads it);
  - the masks' polygons (`mask_outlines.py`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Final

import msgspec
import numpy as np
import numpy.typing as npt

from handler.boxes import IntArray, MaskRuns
from handler.datasets.region_masks import within_runs
from handler.engine.masks import extent, foreground
from handler.kernels import run_store

# COCO's strings: 5 bits a character, a sixth saying another follows, offset into printable ASCII.
_FIRST_CHAR: Final = 48
_GROUP_BITS: Final = 5
_MORE: Final = 0x20
_LOW_BITS: Final = 0x1F
_MOST_GROUPS: Final = 13  # 64 bits in 5-bit groups
# Label Studio's brush stream: 8-bit values, four run-length sizes (label-studio-sdk's).
_BRUSH_WORD: Final = 8
_BRUSH_RUN_SIZES: Final = (3, 4, 8, 16)
_CHANNELS: Final = 4
_ON: Final = 255
_COUNT_BITS: Final = 32
# Column runs of masks encoded at once (`in_groups`): each becomes about two row runs, and a brush
# record or a few polygon edges: a few tens of MB in flight.
RUN_BUDGET: Final = 1 << 15


class RowRuns(msgspec.Struct, frozen=True):
    """The masks' pixels as horizontal runs: mask `owner[i]` covers row `y[i]` from column `x0[i]`
    to `x1[i]` (excluded), sorted by owner, row, column; no two runs of a row touch."""

    owner: IntArray
    y: IntArray
    x0: IntArray
    x1: IntArray


def mask_areas(masks: MaskRuns) -> IntArray:
    """Each mask's pixels (pycocotools' `area`)."""
    fg = foreground(masks)
    areas: IntArray = np.bincount(fg.row, weights=fg.stop - fg.start, minlength=len(masks)).astype(np.int64)
    return areas


def coco_strings(masks: MaskRuns) -> list[bytes]:
    """Each mask's runs as COCO's compressed `counts` string: from the fourth run on, the
    difference from the run two before, in 5-bit groups, low first, a sixth bit on every group but
    the last; the last group's fifth bit is the sign. The runs are merged first (a long run is
    stored in pieces: `MaskRuns`), as pycocotools writes them."""
    counts, offsets = run_store.merged(masks.counts, masks.offsets)
    lengths = np.diff(offsets)
    place = within_runs(lengths)
    values = counts.copy()
    later = np.flatnonzero(place > 2)
    values[later] -= counts[later - 2]
    groups = np.ones(len(values), dtype=np.int64)
    for more in range(1, _MOST_GROUPS):  # a value needs another group while it overflows the ones before
        half = 1 << (_GROUP_BITS * more - 1)
        groups += (values < -half) | (values >= half)
    group = within_runs(groups)
    value_of = np.repeat(values, groups)
    chars = (value_of >> (_GROUP_BITS * group)) & _LOW_BITS
    chars |= np.where(group < np.repeat(groups, groups) - 1, _MORE, 0)
    text = (chars + _FIRST_CHAR).astype(np.uint8).tobytes()
    ends = np.cumsum(
        np.bincount(np.repeat(np.arange(len(masks)), lengths), weights=groups, minlength=len(masks))
    )
    starts = np.concatenate(([0], ends[:-1])).astype(np.int64).tolist()
    return [text[start:end] for start, end in zip(starts, ends.astype(np.int64).tolist(), strict=True)]


def row_runs(masks: MaskRuns) -> RowRuns:
    """The horizontal runs of the masks' pixels: the rows where two neighbouring columns differ
    are where a horizontal run starts or stops, found from the columns' intervals alone."""
    fg = foreground(masks)
    height = masks.height[fg.row]
    first_column, last_column = fg.start // height, (fg.stop - 1) // height
    spans = last_column - first_column + 1
    owner = np.repeat(fg.row, spans)
    column = np.repeat(first_column, spans) + within_runs(spans)
    tall = np.repeat(height, spans)
    top = np.maximum(np.repeat(fg.start, spans) - column * tall, 0)
    bottom = np.minimum(np.repeat(fg.stop, spans) - column * tall, tall)
    # Each column's interval counts at the boundary before its column and the one after: a row is a
    # run's edge at a boundary where exactly one of the two columns covers it. The events (an
    # interval's top: +1, its bottom: -1) are sorted as one int64 key, (owner, boundary, row, end)
    # in bit fields, and read back from it: no gather of several columns, no division.
    row_bits = int(masks.height.max(initial=0) + 1).bit_length()
    column_bits = int(masks.width.max(initial=0) + 2).bit_length()
    before = (owner << column_bits) | column
    events = np.concatenate(
        [
            (((group << row_bits) | y) << 1) | end
            for group in (before, before + 1)
            for y, end in ((top, 0), (bottom, 1))
        ]
    )
    events.sort()
    step = 1 - 2 * (events & 1)
    group, row = events >> (row_bits + 1), (events >> 1) & ((1 << row_bits) - 1)
    covered = np.cumsum(step)
    odd = np.flatnonzero((group[1:] == group[:-1]) & (covered[:-1] == 1) & (row[1:] > row[:-1]))
    rows = row[odd + 1] - row[odd]
    edge_x = np.repeat(group[odd] & ((1 << column_bits) - 1), rows)
    who = np.repeat(group[odd] >> column_bits, rows)
    edges = (((who << row_bits) | (np.repeat(row[odd], rows) + within_runs(rows))) << column_bits) | edge_x
    edges.sort()
    edge_x = edges & ((1 << column_bits) - 1)
    edge_y = (edges >> column_bits) & ((1 << row_bits) - 1)
    who = edges >> (column_bits + row_bits)
    return RowRuns(who[0::2], edge_y[0::2], edge_x[0::2], edge_x[1::2])


def _alternating(
    owner: IntArray, start: IntArray, stop: IntArray, total: IntArray
) -> tuple[IntArray, IntArray]:
    """Each mask's runs of 0s and 1s over its `total` positions, 0s first (perhaps none), from its
    pixels' intervals (sorted, disjoint; touching ones joined here); the runs and their offsets.
    The last run of 0s is left out when it is empty."""
    n = len(total)
    joined = np.ones(len(start), dtype=bool)
    joined[1:] = (owner[1:] != owner[:-1]) | (start[1:] != stop[:-1])
    firsts = np.flatnonzero(joined)
    last = np.append(firsts[1:], len(start))[: len(firsts)] - 1
    owner, start, stop = owner[joined], start[joined], stop[last]
    per_mask = np.bincount(owner, minlength=n)
    last_stop = np.zeros(n, dtype=np.int64)
    has = per_mask > 0
    last_stop[has] = stop[np.cumsum(per_mask)[has] - 1]
    trailing = (total > last_stop).astype(np.int64)
    lengths = 2 * per_mask + trailing
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    runs = np.zeros(offsets[-1], dtype=np.int64)
    within = within_runs(per_mask)
    at = offsets[:-1][owner] + 2 * within
    previous = np.where(within > 0, np.concatenate(([0], stop[:-1])), 0)
    runs[at] = start - previous
    runs[at + 1] = stop - start
    tail = (has & (trailing > 0) | ~has) & (lengths > 0)
    runs[offsets[1:][tail] - 1] = (total - last_stop)[tail]
    return runs, offsets


class Crops(msgspec.Struct, frozen=True):
    """Each mask's crop (its pixels' bounds) and its runs over the crop, row by row, 0s first."""

    left: IntArray
    top: IntArray
    width: IntArray
    height: IntArray
    runs: IntArray
    offsets: IntArray


def cvat_crops(masks: MaskRuns) -> Crops:
    """CVAT's `<mask>` of each mask (every mask with a pixel): its crop is the mask's extent."""
    found = row_runs(masks)
    left, top, right, bottom = extent(masks).astype(np.int64).T
    width, height = right - left, bottom - top
    at = (found.y - top[found.owner]) * width[found.owner] - left[found.owner]
    runs, offsets = _alternating(found.owner, at + found.x0, at + found.x1, width * height)
    return Crops(left, top, width, height, runs, offsets)


def in_groups(masks: MaskRuns) -> Iterator[MaskRuns]:
    """The masks in consecutive groups of about `RUN_BUDGET` runs: what an encoder keeps in flight
    is a few columns per run of one group, whatever the number of masks."""
    group = np.cumsum(np.diff(masks.offsets)) // RUN_BUDGET
    cuts = np.concatenate(([0], np.flatnonzero(np.diff(group)) + 1, [len(masks)])).tolist()
    return (masks[first:last] for first, last in itertools.pairwise(cuts) if last > first)


def label_studio_brushes(masks: MaskRuns) -> list[npt.NDArray[np.uint8]]:
    """Each mask as Label Studio's brush `rle` (the bytes of its bit stream), a group at a time
    (each run a record of ~60 bits in flight)."""
    return [stream for group in in_groups(masks) for stream in _brushes(group)]


def _brushes(masks: MaskRuns) -> list[npt.NDArray[np.uint8]]:
    found = row_runs(masks)
    image_width = masks.width[found.owner]
    at = found.y * image_width
    values = masks.height * masks.width * _CHANNELS
    runs, offsets = _alternating(found.owner, at + found.x0, at + found.x1, masks.height * masks.width)
    mask_of_run = np.repeat(np.arange(len(masks)), np.diff(offsets))
    value = np.where(within_runs(np.diff(offsets)) % 2 == 1, _ON, 0)
    kept = runs > 0
    return _brush_streams(mask_of_run[kept], runs[kept] * _CHANNELS, value[kept], values)


def _brush_streams(
    mask_of_run: IntArray, length: IntArray, value: IntArray, values: IntArray
) -> list[npt.NDArray[np.uint8]]:
    """The rle-pack streams of runs of `length` repeated `value`s (a run longer than the largest
    record split in records), each mask's header first, each stream padded to whole bytes."""
    largest = 1 << _BRUSH_RUN_SIZES[-1]
    records = -(-length // largest)
    mask_of = np.repeat(mask_of_run, records)
    count = np.full(int(records.sum()), largest, dtype=np.int64)
    count[np.cumsum(records) - 1] = length - (records - 1) * largest
    size_index = np.searchsorted(1 << np.array(_BRUSH_RUN_SIZES), count)
    size = np.array(_BRUSH_RUN_SIZES)[size_index]
    # A record: 1 (repeated), its size's index (2 bits), count - 1 (in `size` bits), the value.
    fields = [
        (np.ones_like(count), np.ones_like(count)),
        (size_index, np.full_like(count, 2)),
        (count - 1, size),
        (np.repeat(value, records), np.full_like(count, _BRUSH_WORD)),
    ]
    record_bits, record_kept = _bit_fields(fields)
    header = [
        (values, np.full_like(values, _COUNT_BITS)),
        (np.full_like(values, _BRUSH_WORD - 1), np.full_like(values, 5)),
        *((np.full_like(values, s - 1), np.full_like(values, 4)) for s in _BRUSH_RUN_SIZES),
    ]
    header_bits, header_kept = _bit_fields(header)
    n = len(values)
    # One row of bits per header and per record, each row's mask first, then padded to whole bytes.
    owners = np.concatenate((np.arange(n), mask_of))
    order = np.argsort(owners, kind="stable")
    bits = np.concatenate((header_bits, _padded(record_bits, header_bits.shape[1])))[order]
    kept = np.concatenate((header_kept, _padded(record_kept, header_kept.shape[1])))[order]
    per_mask = np.bincount(owners[order], weights=kept.sum(axis=1), minlength=n).astype(np.int64)
    padding = -per_mask % 8
    stream = bits[kept]
    place = np.arange(len(stream)) + np.repeat(np.cumsum(padding) - padding, per_mask)
    packed_bits = np.zeros(int((per_mask + padding).sum()), dtype=np.uint8)
    packed_bits[place] = stream
    data = np.packbits(packed_bits)
    ends = np.cumsum((per_mask + padding) // 8)
    starts = ends - (per_mask + padding) // 8
    return [data[start:end] for start, end in zip(starts.tolist(), ends.tolist(), strict=True)]


def _bit_fields(
    fields: list[tuple[IntArray, IntArray]],
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_]]:
    """Rows of fields written high bit first, each `value` in its `bits` bits: each field has the
    room of its widest, its leading bits beyond its own width left out (the second array)."""
    columns, kept = [], []
    for value, bits in fields:
        room = int(bits.max(initial=1))
        shift = np.arange(room - 1, -1, -1)
        columns.append(((value[:, None] >> shift) & 1).astype(np.uint8))
        kept.append(shift[None, :] < bits[:, None])
    return np.hstack(columns), np.hstack(kept)


def _padded(array: npt.NDArray[np.generic], width: int) -> npt.NDArray[np.generic]:
    """Rows of `array` widened to `width` columns with zeros (False) at their end."""
    rows, columns = array.shape
    wide = np.zeros((rows, max(width, columns)), dtype=array.dtype)
    wide[:, :columns] = array
    return wide
