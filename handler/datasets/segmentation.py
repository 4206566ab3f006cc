"""COCO's `segmentation` values, one per row, as instance masks (`Masks`).

A value is polygons (a list of `[x1, y1, x2, y2, …]` lists: the parts of one object, one mask),
or RLE (`{"size": [height, width], "counts": …}`, `counts` compressed as a string or written as a
list of runs); a row without one (or with `[]`, as box exports write) has no mask. Polygons need
their image's size; RLE carries its own, which must be the image's where that is known. The values
are read from their JSON text by a kernel (`kernels/segmentation_text.py`), every row at once into
columns: RLE is made into runs (strings decoded by `engine/masks.py`); polygons are kept as their
vertices (`UnmadeMasks`), rasterised only when masks are scored.
"""

from __future__ import annotations

import json
from typing import Any, Final

import msgspec
import numpy as np

from handler.boxes import (
    BoolArray,
    FloatArray,
    IntArray,
    MaskRuns,
    Masks,
    TableMasks,
    UnmadeMasks,
    WrittenMasks,
)
from handler.datasets.cocojson import NO_SEGMENTATION
from handler.engine.masks import from_text, well_formed
from handler.kernels import run_store
from handler.kernels import segmentation_text as kinds
from handler.kernels.segmentation_text import Segmentations, scanned

BAD_POLYGONS: Final = "segmentation: expected polygons, lists of at least 3 x, y pairs of numbers"
BAD_RLE: Final = 'segmentation: expected RLE, {"size": [height, width], "counts": runs or a COCO string}'
RUNS_SHORT: Final = "segmentation: its RLE counts do not add up to its size (height x width)"
OTHER_SIZE: Final = "segmentation: its RLE size is not the image's height and width"
NO_SIZE: Final = "segmentation: polygons need the image's width and height, which the file does not give"
# The reasons of the rows the kernel tells unreadable by their text alone.
_REASONS: Final = {
    kinds.BAD_POLYGONS: BAD_POLYGONS,
    kinds.BAD_RLE: BAD_RLE,
    kinds.RUNS_OUT_OF_RANGE: RUNS_SHORT,
    kinds.NO_SIZE: NO_SIZE,
}


class RowMasks(msgspec.Struct, frozen=True):
    """The rows' masks (None: no row has one) and the rows whose value could not be read, with why."""

    masks: TableMasks | None
    rejected: dict[int, str]


class SegmentationText(msgspec.Struct, frozen=True):
    """Rows' `segmentation` values as the file wrote them: row i's is `text[starts[i]:ends[i]]`
    (`null` where it wrote none)."""

    text: bytes
    starts: IntArray
    ends: IntArray

    @classmethod
    def of(cls, values: list[bytes] | list[msgspec.Raw]) -> SegmentationText:
        """Values as text, joined."""
        lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
        ends = np.cumsum(lengths)
        return cls(b"".join(values), ends - lengths, ends)


def segmentation_masks(
    values: list[Any] | SegmentationText,
    image: IntArray,
    widths: FloatArray,
    heights: FloatArray,
    boxless: BoolArray,
) -> RowMasks:
    """The masks of rows whose `segmentation` is `values[row]` (None: none written) on images
    `image[row]` (-1: unknown) of sizes `widths`, `heights` (NaN where unknown). Values kept as
    text (`SegmentationText`, or a typed decoding's `msgspec.Raw`) stay text (`WrittenMasks`,
    read by `readable` once masks are scored) unless a `boxless` row wrote one: its box is its
    mask's extent, read now. Values a plain parse made are read now, as their JSON text again."""
    if isinstance(values, list) and values.count(NO_SEGMENTATION) == len(values):  # names none: boxes
        return RowMasks(None, {})
    known = image >= 0
    width = np.where(known, widths[np.maximum(image, 0)] if len(widths) else np.nan, np.nan)
    height = np.where(known, heights[np.maximum(image, 0)] if len(heights) else np.nan, np.nan)
    if isinstance(values, list) and not (values and isinstance(values[0], msgspec.Raw)):
        return RowMasks(*_read(_written(SegmentationText.of(_texts(values)), height, width).masks))
    written = _written(
        values if isinstance(values, SegmentationText) else SegmentationText.of(values), height, width
    )
    if not (boxless & written.wrote).any():
        return RowMasks(written.masks if written.masks.present.any() else None, {})
    return RowMasks(*_read(written.masks))


def readable(masks: TableMasks) -> Masks:
    """The masks with those still text read: a value that cannot be read is then no mask."""
    if not isinstance(masks, WrittenMasks):
        return masks
    made, _ = _read(masks)
    return MaskRuns.none(len(masks)) if made is None else made


def _texts(values: list[Any]) -> list[bytes]:
    """Values a plain JSON parse made (or a caller gave) written as JSON again, as `json.loads`
    reads them back (NaN and integers of any size too); a value JSON cannot hold is written null,
    a key it cannot hold left out."""
    written = json.JSONEncoder(separators=(",", ":"), default=_null, skipkeys=True)
    return [written.encode(value).encode() for value in values]


def _null(_: object) -> None:
    return None


class _Text(msgspec.Struct, frozen=True):
    """Rows' values kept as text, and which rows wrote any value (not `null`)."""

    masks: WrittenMasks
    wrote: BoolArray


# JSON's whitespace: after a bracket, it leaves open whether the value is empty.
_SPACES: Final = np.frombuffer(b" \t\r\n", dtype=np.uint8)


def _written(values: SegmentationText, height: FloatArray, width: FloatArray) -> _Text:
    """The values as `WrittenMasks`. A row has a mask when it wrote a list that is not empty
    (polygons: on an image of known size) or an object that is not empty (RLE): the values are
    told apart by their first two bytes, no value parsed."""
    text, starts, ends = values.text, values.starts, values.ends
    lengths = ends - starts
    data = np.frombuffer(text, dtype=np.uint8)
    long = np.flatnonzero(lengths > 2)  # `[]`, `{}` and any shorter value hold no mask
    first, second = data[starts[long]], data[starts[long] + 1]
    polygons = (first == ord("[")) & np.isfinite(height[long]) & np.isfinite(width[long])
    present = np.zeros(len(lengths), dtype=bool)
    present[long] = (polygons | (first == ord("{"))) & ~np.isin(second, _SPACES)
    spaced = long[(polygons | (first == ord("{"))) & np.isin(second, _SPACES)]
    present[spaced] = [
        len(text[starts[row] : ends[row]].translate(None, _SPACES.tobytes())) > 2 for row in spaced.tolist()
    ]
    wrote = (lengths != 4) | (data[np.minimum(starts, len(data) - 1)] != ord("n"))
    return _Text(WrittenMasks(text, starts, ends, height, width, present), wrote)


def _read(masks: WrittenMasks) -> tuple[Masks | None, dict[int, str]]:
    """The masks of values kept as text (None: no row wrote one), and the rows whose value
    could not be read, with why."""
    rows = scanned(masks.text, masks.starts, masks.ends, masks.height, masks.width)
    if not rows.kinds.any():
        return None, {}
    bad = np.flatnonzero(np.isin(rows.kinds, list(_REASONS)))
    rejected = {row: _REASONS[kind] for row, kind in zip(bad.tolist(), rows.kinds[bad].tolist(), strict=True)}
    runs = _rle_runs(rows, masks.height, masks.width, rejected)
    drawn = rows.kinds == kinds.POLYGONS
    if not drawn.any():
        return runs, rejected
    polygons = UnmadeMasks(
        runs,
        rows.points.reshape(-1, 2),
        _offsets(rows.part_lengths // 2),
        _offsets(rows.row_parts),
        np.where(drawn, masks.height, 0).astype(np.int64),
        np.where(drawn, masks.width, 0).astype(np.int64),
    )
    return polygons, rejected


def _rle_runs(
    rows: Segmentations, height: FloatArray, width: FloatArray, rejected: dict[int, str]
) -> MaskRuns:
    """Every row's RLE as runs (none where a row has none or it could not be read: those in
    `rejected`, its runs not adding up to its size or its size not the image's)."""
    strings = np.flatnonzero(rows.kinds == kinds.RLE_STRING)
    listed = np.flatnonzero(rows.kinds == kinds.RLE_RUNS)
    order = np.concatenate((strings, listed))
    sizes = rows.sizes[order]
    decoded, decodable = from_text(
        rows.strings,
        _offsets(rows.string_lengths[strings]),
        sizes[: len(strings), 0],
        sizes[: len(strings), 1],
    )
    written = MaskRuns(
        *run_store.narrowed(rows.runs, _offsets(rows.run_lengths[listed])),
        sizes[len(strings) :, 0],
        sizes[len(strings) :, 1],
    )
    parts = [part for part in (decoded, written) if len(part)]
    runs = parts[0] if len(parts) == 1 else MaskRuns.concatenate(parts)  # one kind: not copied
    good = well_formed(runs) & np.concatenate((decodable, np.ones(len(listed), dtype=bool)))
    image_size = np.stack((height[order], width[order]), axis=1)
    fits = (~np.isfinite(image_size) | (image_size == sizes)).all(axis=1)
    rejected.update((row, RUNS_SHORT) for row in order[~good].tolist())
    rejected.update((row, OTHER_SIZE) for row in order[good & ~fits].tolist())
    keep = good & fits
    rows_all = np.arange(len(rows.kinds))
    if keep.all() and np.array_equal(order, rows_all):  # every row an RLE of one kind, read
        return runs
    # Row r takes its kept runs, or its own empty row after them.
    source = len(order) + rows_all
    source[order[keep]] = np.flatnonzero(keep)
    return MaskRuns.concatenate([runs, MaskRuns.none(len(rows.kinds))])[source]


def _offsets(lengths: IntArray) -> IntArray:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets
