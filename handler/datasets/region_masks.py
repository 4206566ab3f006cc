"""The masks of a tool's regions (Label Studio, CVAT, YOLO-seg) as `MaskRuns` aligned with a
reader's rows: polygons in pixels and pixel masks in the tools' own encodings.

A reader collects, region by region (its format is a list of Python objects anyway), each mask
region's polygon points or decoded pixels in a `RegionMasks`, then `runs(...)` makes every mask
at once (`engine/masks.py`: polygons rasterised as pycocotools does). Decoding is numpy over
each region's bytes or runs, never a Python step per pixel or per run:

- Label Studio's brush `rle` (the thi.ng rle-pack bit stream of an RGBA picture, row-major;
  label_studio_sdk.converter.brush is the reference): a record at every bit position is read at
  once, and the chain of records from the header is followed by pointer doubling;
- CVAT's `<mask rle left top width height>` (row-major runs over the crop, background first;
  datumaro's CVAT plugin is the reference).
"""

from __future__ import annotations

import math
import re
from typing import Any, Final

import msgspec
import numpy as np
import numpy.typing as npt
from msgspec import field
from msgspec.structs import replace

from handler.boxes import (
    WROTE_BOX,
    WROTE_MASK,
    WROTE_POLYGON,
    FloatArray,
    Images,
    IntArray,
    MaskRuns,
    ParsedRows,
)
from handler.datasets.assetnames import asset_key
from handler.datasets.loaded import Loaded
from handler.engine.masks import extent, from_pixels, from_polygons, united
from handler.errors import DatasetError, quoted

# Decimals a polygon's point keeps once scaled to pixels (`polygon_points`).
_DIGITS: Final = 9
# The longest image side a mask is drawn on: a larger size is a typo or damage.
MAX_IMAGE_SIDE: Final = 1 << 16
# A polygon needs three points to enclose anything.
MIN_POLYGON_POINTS: Final = 3
# Label Studio's brush stream: a 32-bit value count, a 5-bit word size, four 4-bit run sizes.
_HEADER_BITS: Final = 53
_BYTE = 8
_WORD_BITS: Final = 64
# Every record's fields start within 3 + 16 bits of it and a value is at most 32 bits: a 64-bit
# window read at each bit position holds them (plus the 7 bits of the position in its byte).
_WINDOW_BYTES: Final = 8
# CVAT's runs: whole numbers and commas (each short enough for 64 bits).
_RUNS: Final = re.compile(r"\s*\d{1,18}(?:\s*,\s*\d{1,18})*\s*")
# An RGBA picture: four values a pixel, the alpha one the mask.
_CHANNELS: Final = 4


class MaskDecodeError(ValueError):
    """A region's mask cannot be decoded: the message says what was expected."""


def image_size(width: float, height: float) -> tuple[int, int]:
    """An image's size to draw a mask on, as whole pixels: both known, at least 1, at most
    `MAX_IMAGE_SIDE` (a size beyond is a typo or damage, refused before any array is made)."""
    if not all(math.isfinite(v) and 1 <= v <= MAX_IMAGE_SIDE for v in (width, height)):
        raise MaskDecodeError(
            f"expected the image's width and height (1 to {MAX_IMAGE_SIDE} pixels) to draw it"
        )
    return int(width), int(height)


class RegionMasks(msgspec.Struct):
    """Masks of some of a reader's rows, as found: polygons (pixels, (M, 2)) or pixel positions
    (column-major); the parts given for one row (a CVAT group's shapes) are united into its mask."""

    polygon_rows: list[int] = field(default_factory=list)
    polygons: list[FloatArray] = field(default_factory=list)
    pixel_rows: list[int] = field(default_factory=list)
    pixels: list[IntArray] = field(default_factory=list)

    def add_polygon(self, row: int, points: FloatArray) -> None:
        self.polygon_rows.append(row)
        self.polygons.append(points)

    def boxes(self, masks: MaskRuns | None, xyxy: FloatArray) -> FloatArray:
        """`boxes_of` the rows, a polygon's written box its points' bounds."""
        written = self._bounds(xyxy.copy()) if self.polygons else xyxy
        return boxes_of(masks, written)

    def polygon_bounds(self, rows: int) -> FloatArray:
        """(rows, 4) the bounds of each row's polygon points, NaN for rows without a polygon."""
        bounds = np.full((rows, 4), np.nan)
        return self._bounds(bounds) if self.polygons else bounds

    def _bounds(self, written: FloatArray) -> FloatArray:
        rows = np.array(self.polygon_rows, dtype=np.int64)
        lows = np.array([points.min(axis=0) for points in self.polygons])
        highs = np.array([points.max(axis=0) for points in self.polygons])
        written[rows, :2], written[rows, 2:] = np.inf, -np.inf  # the parts' bounds united
        np.minimum.at(written[:, :2], rows, lows)
        np.maximum.at(written[:, 2:], rows, highs)
        return written

    def wrote(self, rows: int) -> IntArray:
        """(rows,) what each row wrote in place of a box (`ParsedRows.wrote`): a mask where any part
        of it is pixels, else a polygon where it has one."""
        wrote = np.full(rows, WROTE_BOX, dtype=np.int64)
        wrote[np.array(self.polygon_rows, dtype=np.int64)] = WROTE_POLYGON
        wrote[np.array(self.pixel_rows, dtype=np.int64)] = WROTE_MASK
        return wrote

    def moved(self, new_row: IntArray) -> RegionMasks:
        """The masks of row r as row `new_row[r]` (several rows moved to one are its parts)."""
        return RegionMasks(
            [int(new_row[r]) for r in self.polygon_rows],
            self.polygons,
            [int(new_row[r]) for r in self.pixel_rows],
            self.pixels,
        )

    def add_pixels(self, row: int, positions: IntArray) -> None:
        self.pixel_rows.append(row)
        self.pixels.append(positions)

    def __bool__(self) -> bool:
        return bool(self.polygon_rows or self.pixel_rows)

    def runs(self, rows: int, heights: FloatArray, widths: FloatArray) -> MaskRuns | None:
        """The masks of all `rows` rows (rows without one have none); each row's image size is
        `heights[row]` x `widths[row]`, known for every row that has a mask. None: no mask."""
        if not self:
            return None
        polygon_rows = np.array(self.polygon_rows, dtype=np.int64)
        pixel_rows = np.array(self.pixel_rows, dtype=np.int64)
        lengths = np.array([len(p) for p in self.polygons], dtype=np.int64)
        xy = np.concatenate(self.polygons) if self.polygons else np.zeros((0, 2))
        drawn = from_polygons(
            xy,
            np.concatenate(([0], np.cumsum(lengths))).astype(np.int64),
            np.arange(len(polygon_rows), dtype=np.int64),
            heights[polygon_rows].astype(np.int64),
            widths[polygon_rows].astype(np.int64),
        )
        counts = np.array([len(p) for p in self.pixels], dtype=np.int64)
        painted = from_pixels(
            np.repeat(np.arange(len(pixel_rows), dtype=np.int64), counts),
            np.concatenate(self.pixels) if self.pixels else np.zeros(0, dtype=np.int64),
            heights[pixel_rows].astype(np.int64),
            widths[pixel_rows].astype(np.int64),
        )
        return _placed(
            *_united_by_row(MaskRuns.concatenate([drawn, painted]), polygon_rows, pixel_rows), rows
        )


def _united_by_row(parts: MaskRuns, *rows_of: IntArray) -> tuple[MaskRuns, IntArray]:
    """The parts (in the order of `rows_of`' rows) as one mask per row, with those rows."""
    part_rows = np.concatenate(rows_of)
    rows, owner = np.unique(part_rows, return_inverse=True)
    if len(rows) == len(part_rows):  # one part a row: nothing to unite
        return parts, part_rows
    order = np.argsort(owner, kind="stable")
    return united(parts[order], owner[order], len(rows)), rows


def within_runs(lengths: IntArray) -> IntArray:
    """0, 1, … within each of consecutive runs of `lengths`: where each item stands in its run."""
    within: IntArray = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(
        np.cumsum(lengths) - lengths, lengths
    )
    return within


def _placed(masks: MaskRuns, rows: IntArray, n: int) -> MaskRuns:
    """`masks[i]` as row `rows[i]` of n rows, the other rows without a mask."""
    source = np.full(n, len(masks), dtype=np.int64)
    source[rows] = np.arange(len(masks))
    without = source == len(masks)
    source[without] = len(masks) + np.arange(np.count_nonzero(without))
    return MaskRuns.concatenate([masks, MaskRuns.none(int(np.count_nonzero(without)))])[source]


def boxes_of(masks: MaskRuns | None, xyxy: FloatArray) -> FloatArray:
    """The rows' boxes: a mask's extent where a row has a mask with pixels, the written box
    elsewhere (a polygon's bounds: one drawn wholly off its image is then named so)."""
    if masks is None:
        return xyxy
    box = extent(masks)
    drawn = box[:, 2] > box[:, 0]
    boxes = xyxy.copy()
    boxes[drawn] = box[drawn]
    return boxes


def polygon_points(values: Any, scale: tuple[float, float]) -> FloatArray:
    """(M, 2) pixels of a polygon written as x y pairs scaled by `scale` (percent or fractions of
    the image): rounded to 1e-9 pixel, so that a point written on a half pixel and scaled back
    falls on that half pixel as pycocotools rounds it, not a rounding error below it."""
    try:
        flat = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):  # not numbers, or pairs of different lengths
        raise MaskDecodeError("expected the polygon's points as numbers") from None
    if len(flat) % 2 or len(flat) < 2 * MIN_POLYGON_POINTS:
        raise MaskDecodeError(
            f"expected at least {MIN_POLYGON_POINTS} points as x y pairs, got {len(flat)} numbers"
        )
    if not np.isfinite(flat).all():
        raise MaskDecodeError("expected finite numbers as the polygon's points")
    points: FloatArray = np.round(flat.reshape(-1, 2) * np.array(scale), _DIGITS)
    return points


def _bytes_of(values: Any) -> npt.NDArray[np.uint8]:
    try:
        array = np.asarray(values)
    except (TypeError, ValueError, OverflowError):  # lists of different lengths, huge integers
        array = np.zeros((0, 0))
    if array.ndim != 1 or array.dtype.kind not in "iu" or ((array < 0) | (array > 255)).any():
        raise MaskDecodeError("expected `rle` as a list of bytes (whole numbers 0 to 255)")
    return array.astype(np.uint8)


def _windows(data: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint64]:
    """The 64 bits from every bit position on (zeros past the end)."""
    padded = np.concatenate((data, np.zeros(_WINDOW_BYTES, dtype=np.uint8)))
    by_byte = np.lib.stride_tricks.sliding_window_view(padded, _WINDOW_BYTES)[: len(data)]
    words = np.ascontiguousarray(by_byte).view(">u8").reshape(-1).astype(np.uint64)
    shift = np.tile(np.arange(_BYTE, dtype=np.uint64), len(data))
    windows: npt.NDArray[np.uint64] = np.repeat(words, _BYTE) << shift
    return windows


def _field(window: npt.NDArray[np.uint64], skip: IntArray | int, bits: IntArray | int) -> IntArray:
    """The `bits`-bit number starting `skip` bits into each window."""
    value = (window << np.asarray(skip, dtype=np.uint64)) >> np.asarray(
        _WORD_BITS - np.asarray(bits), dtype=np.uint64
    )
    return value.astype(np.int64)


def _chain(step: IntArray, start: int) -> IntArray:
    """The positions `start`, `step[start]`, `step[step[start]]`, … below `len(step) - 1` (the
    last position maps to itself): doubled in log steps, the jump table squared each time."""
    end = len(step) - 1
    found = np.array([start], dtype=np.int64)
    jump = step
    while found[-1] < end:
        found = np.concatenate((found, jump[found]))
        jump = jump[jump]
    kept: IntArray = found[found < end]
    return kept


def label_studio_brush(rle: Any, height: int, width: int) -> IntArray:
    """The column-major pixel positions of a Label Studio brush mask (its alpha channel not 0)."""
    data = _bytes_of(rle)
    total_bits = len(data) * _BYTE
    if total_bits < _HEADER_BITS:
        raise MaskDecodeError(f"expected a brush `rle` of at least {_HEADER_BITS} bits, got {total_bits}")
    window = _windows(data)
    values = int(_field(window[:1], 0, 32)[0])
    word = int(_field(window[32:33], 0, 5)[0]) + 1
    run_bits = _field(window[37:53:4], 0, 4) + 1
    if values != height * width * _CHANNELS:
        raise MaskDecodeError(
            f"expected {height} x {width} x {_CHANNELS} values (the image's RGBA) in the brush `rle`, "
            f"got {values}"
        )
    repeat = _field(window, 0, 1) == 1
    size = run_bits[_field(window, 1, 2)]
    count = _field(window, 3, size) + 1
    head = 3 + size
    length = head + np.where(repeat, word, count * word)
    step = np.append(np.minimum(np.arange(total_bits) + length, total_bits), total_bits)
    records = _chain(step, _HEADER_BITS)
    if not len(records):
        raise MaskDecodeError("expected runs after the brush `rle`'s header")
    written = np.cumsum(count[records])
    records = records[: int(np.searchsorted(written, values)) + 1]
    if written[len(records) - 1] < values or records[-1] + length[records[-1]] > total_bits:
        raise MaskDecodeError(f"the brush `rle` ends before its {values} values")
    return _alpha_positions(window, records, repeat, head, count, word, height, width)


def _alpha_positions(
    window: npt.NDArray[np.uint64],
    records: IntArray,
    repeat: npt.NDArray[np.bool_],
    head: IntArray,
    count: IntArray,
    word: int,
    height: int,
    width: int,
) -> IntArray:
    """The pixels whose alpha value is not 0, as column-major positions: a repeated record's
    value covers the alpha values of its span at once, a literal record's values are read one
    by one (those only)."""
    per_record = count[records]
    first = np.cumsum(per_record) - per_record  # each record's first value
    repeated = repeat[records]
    value = _field(window[records + head[records]], 0, word)
    solid = repeated & (value != 0)
    start, stop = first[solid] // _CHANNELS, (first + per_record)[solid] // _CHANNELS
    literal = records[~repeated]
    literal_count = per_record[~repeated]
    within = within_runs(literal_count)
    index = np.repeat(first[~repeated], literal_count) + within
    alpha = index % _CHANNELS == _CHANNELS - 1
    bits_at = np.repeat(literal + head[literal], literal_count)[alpha] + within[alpha] * word
    drawn = index[alpha][_field(window[bits_at], 0, word) != 0] // _CHANNELS
    pixels = height * width
    start, stop = np.concatenate((start, drawn)), np.minimum(np.concatenate((stop, drawn + 1)), pixels)
    edges = np.zeros(pixels + 1, dtype=np.int64)
    np.add.at(edges, start[start < stop], 1)
    np.add.at(edges, stop[start < stop], -1)
    return _column_major(np.cumsum(edges[:-1]) > 0, height, width)


def _column_major(row_major: npt.NDArray[np.bool_], height: int, width: int) -> IntArray:
    """The positions of a picture's pixels that are set (row by row) column by column, in order."""
    positions: IntArray = np.flatnonzero(row_major.reshape(height, width).T)
    return positions


def cvat_mask(rle: str, crop: tuple[int, int, int, int], height: int, width: int) -> IntArray:
    """The column-major pixel positions of a CVAT `<mask>`: `rle` alternating runs of 0s and 1s
    over its crop (`left, top, crop width, crop height`) row by row, 0s first."""
    left, top, crop_width, crop_height = crop
    if left < 0 or top < 0 or crop_width <= 0 or crop_height <= 0:
        raise MaskDecodeError("expected a crop of whole numbers, left and top >= 0, width and height > 0")
    if left + crop_width > width or top + crop_height > height:
        raise MaskDecodeError(f"expected the mask's crop inside the {width} x {height} image")
    if not _RUNS.fullmatch(rle):
        raise MaskDecodeError("expected `rle` as whole numbers separated by commas")
    runs = np.array(rle.split(","), dtype=np.int64)
    if (runs < 0).any() or runs.sum() != crop_width * crop_height:
        raise MaskDecodeError(
            f"expected runs of 0 or more adding up to the crop's {crop_width} x {crop_height} pixels"
        )
    crop_pixels = np.repeat(np.arange(len(runs)) % 2 == 1, runs)
    in_crop = _column_major(crop_pixels, crop_height, crop_width)
    positions: IntArray = (in_crop // crop_height + left) * height + in_crop % crop_height + top
    return positions


def sizes_known(
    where: str, images: Images, reference: Loaded | None, needed: IntArray, sizes_from: str
) -> Images:
    """The images' sizes, those the dataset does not give taken from the ground truth it is
    read against (by asset name); each image of `needed` must then have one."""
    widths, heights = images.widths.copy(), images.heights.copy()
    if reference is not None:
        gt = reference.dataset
        known = {asset_key(name): i for i, name in enumerate(gt.asset_ids)}
        at = np.array([known.get(asset_key(name), -1) for name in images.asset_ids], dtype=np.int64)
        fill = (at >= 0) & ~(np.isfinite(widths) & np.isfinite(heights))
        widths[fill], heights[fill] = gt.widths[at[fill]], gt.heights[at[fill]]
    usable = np.isfinite(widths) & np.isfinite(heights) & (np.maximum(widths, heights) <= MAX_IMAGE_SIDE)
    unsized = needed[~usable[needed]]
    if len(unsized):
        raise DatasetError(
            f"{where}: asset {quoted(images.asset_ids[int(unsized[0])])} has polygons in normalised "
            f"coordinates but no image width/height (1 to {MAX_IMAGE_SIDE} pixels): expected its size to "
            f"draw them ({sizes_from})"
        )
    return replace(images, widths=widths, heights=heights)


def drawn_polygons(rows: ParsedRows, xy: FloatArray, points: IntArray, images: Images) -> ParsedRows:
    """Rows whose polygons (`points[k]` of `xy` for row k, 0-1 fractions of their image) are
    drawn in pixels as masks, their boxes the masks' extents."""
    drawn = np.flatnonzero(points > 0)
    image = rows.image[drawn]
    width, height = images.widths[image], images.heights[image]
    scale = np.repeat(np.column_stack((width, height)), points[drawn], axis=0)
    offsets = np.concatenate(([0], np.cumsum(points[drawn]))).astype(np.int64)
    masks = from_polygons(
        np.round(xy * scale, _DIGITS),
        offsets,
        np.arange(len(drawn), dtype=np.int64),
        height.astype(np.int64),
        width.astype(np.int64),
    )
    placed = _placed(masks, drawn, len(rows))
    written = rows.xyxy.copy()
    written[drawn] *= np.column_stack((width, height, width, height))
    normalized = np.zeros(len(rows), dtype=bool)
    wrote = np.where(points > 0, WROTE_POLYGON, WROTE_BOX)
    return replace(rows, masks=placed, xyxy=boxes_of(placed, written), normalized=normalized, wrote=wrote)
