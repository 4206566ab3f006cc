"""COCO's `segmentation` values, one per row, as instance masks (`Masks`).

A value is polygons (a list of `[x1, y1, x2, y2, …]` lists: the parts of one object, one mask),
or RLE (`{"size": [height, width], "counts": …}`, `counts` compressed as a string or written as a
list of runs); a row without one (or with `[]`, as box exports write) has no mask. Polygons need
their image's size; RLE carries its own, which must be the image's where that is known. The values
are sorted by kind here, all the rows of a kind at once: RLE is made into runs by `engine/masks.py`;
polygons are kept as their vertices (`UnmadeMasks`), rasterised only when masks are scored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import chain
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
    concatenate_masks,
)
from handler.datasets.cocojson import NO_SEGMENTATION
from handler.engine.masks import from_strings, well_formed

# A polygon of fewer points encloses nothing (pycocotools reads a list of 4 numbers as a box).
MIN_POLYGON_NUMBERS: Final = 6
BAD_POLYGONS: Final = "segmentation: expected polygons, lists of at least 3 x, y pairs of numbers"
BAD_RLE: Final = 'segmentation: expected RLE, {"size": [height, width], "counts": runs or a COCO string}'
RUNS_SHORT: Final = "segmentation: its RLE counts do not add up to its size (height x width)"
OTHER_SIZE: Final = "segmentation: its RLE size is not the image's height and width"
NO_SIZE: Final = "segmentation: polygons need the image's width and height, which the file does not give"


@dataclass(frozen=True)
class RowMasks:
    """The rows' masks (None: no row has one) and the rows whose value could not be read, with why."""

    masks: TableMasks | None
    rejected: dict[int, str]


@dataclass(frozen=True)
class SegmentationText:
    """Rows' `segmentation` values as the file wrote them: row i's is `text[starts[i]:ends[i]]`
    (`null` where it wrote none)."""

    text: bytes
    starts: IntArray
    ends: IntArray

    @classmethod
    def of(cls, values: list[msgspec.Raw]) -> SegmentationText:
        """Values a typed decoding kept as text, joined."""
        lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
        ends = np.cumsum(lengths)
        return cls(b"".join(values), ends - lengths, ends)

    def texts(self) -> list[bytes]:
        return [
            self.text[start:end] for start, end in zip(self.starts.tolist(), self.ends.tolist(), strict=True)
        ]


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
    parsed by `readable` once masks are scored) unless a `boxless` row wrote one: its box is its
    mask's extent, read now."""
    if isinstance(values, list) and values.count(NO_SEGMENTATION) == len(values):  # names none: boxes
        return RowMasks(None, {})
    known = image >= 0
    width = np.where(known, widths[np.maximum(image, 0)] if len(widths) else np.nan, np.nan)
    height = np.where(known, heights[np.maximum(image, 0)] if len(heights) else np.nan, np.nan)
    if isinstance(values, list) and values and isinstance(values[0], msgspec.Raw):
        values = SegmentationText.of(values)
    if isinstance(values, SegmentationText):
        written = _written(values, height, width)
        if not (boxless & written.wrote).any():
            return RowMasks(written.masks if written.masks.present.any() else None, {})
        values = _parsed(b"[" + b",".join(values.texts()) + b"]")
    return RowMasks(*_masks_of(values, height, width))


def readable(masks: TableMasks) -> Masks:
    """The masks with those still text parsed: a value that cannot be read is then no mask."""
    if not isinstance(masks, WrittenMasks):
        return masks
    texts = SegmentationText(masks.text, masks.starts, masks.ends).texts()
    made, _ = _masks_of(_parsed(b"[" + b",".join(texts) + b"]"), masks.height, masks.width)
    return MaskRuns.none(len(masks)) if made is None else made


def _parsed(text: bytes) -> list[Any]:
    """A JSON array read once already (as `Raw` values or by the records kernel, which also
    takes NaN and Infinity), with the numbers `json.loads` gives: msgspec's, or `json.loads`'
    where msgspec finds a number out of a float's range (1e309) or one JSON does not have."""
    try:
        values: list[Any] = msgspec.json.decode(text)
    except msgspec.DecodeError:  # ValidationError included
        values = json.loads(text)
    return values


@dataclass(frozen=True)
class _Text:
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


def _masks_of(
    values: list[Any], height: FloatArray, width: FloatArray
) -> tuple[Masks | None, dict[int, str]]:
    """The masks of rows whose `segmentation` is `values[row]` on images of `height` x `width`
    (None: no row has one), and the rows whose value could not be read, with why."""
    polygons = [row for row, value in enumerate(values) if isinstance(value, list) and value]
    rles = [row for row, value in enumerate(values) if isinstance(value, dict) and value]
    if not polygons and not rles:
        return None, {}
    rejected: dict[int, str] = {}
    drawn_rows, drawn = _polygon_masks(values, np.array(polygons, dtype=np.int64), height, width, rejected)
    rle_rows, decoded = _rle_masks(values, np.array(rles, dtype=np.int64), height, width, rejected)
    rows = np.concatenate((drawn_rows, rle_rows))
    others = np.setdiff1d(np.arange(len(values)), rows)
    masks = concatenate_masks([drawn, decoded, MaskRuns.none(len(others))])
    return masks[np.argsort(np.concatenate((rows, others)), kind="stable")], rejected


def _polygon_masks(
    values: list[Any], rows: IntArray, height: FloatArray, width: FloatArray, rejected: dict[int, str]
) -> tuple[IntArray, UnmadeMasks]:
    """The rows of polygons that could be read, and their masks (their vertices, not yet
    rasterised); the others in `rejected`."""
    if not all(_polygons_shaped(values[row]) for row in rows.tolist()):
        shaped = np.array([_polygons_shaped(values[row]) for row in rows.tolist()], dtype=bool)
        rejected.update((row, BAD_POLYGONS) for row in rows[~shaped].tolist())
        rows = rows[shaped]
    objects = [values[row] for row in rows.tolist()]
    parts = np.fromiter(map(len, objects), dtype=np.int64, count=len(objects))
    lengths = np.fromiter(map(len, chain.from_iterable(objects)), dtype=np.int64, count=int(parts.sum()))
    try:
        flat = np.fromiter(chain.from_iterable(chain.from_iterable(objects)), np.float64, int(lengths.sum()))
    except (TypeError, ValueError):  # a value that is not a number: those rows, one by one
        numeric = np.array([_numbers(values[row]) for row in rows.tolist()], dtype=bool)
        rejected.update((row, BAD_POLYGONS) for row in rows[~numeric].tolist())
        return _polygon_masks(values, rows[numeric], height, width, rejected)
    part_row = np.repeat(np.arange(len(rows)), parts)
    finite = (
        np.bincount(
            np.repeat(np.arange(len(lengths)), lengths), weights=~np.isfinite(flat), minlength=len(lengths)
        )
        == 0
    )
    good_part = finite & (lengths >= MIN_POLYGON_NUMBERS) & (lengths % 2 == 0)
    good = np.bincount(part_row, weights=~good_part, minlength=len(rows)) == 0
    sized = np.isfinite(height[rows]) & np.isfinite(width[rows])
    rejected.update((row, BAD_POLYGONS) for row in rows[~good].tolist())
    rejected.update((row, NO_SIZE) for row in rows[good & ~sized].tolist())
    kept_row = good & sized
    kept_part = kept_row[part_row]
    flat = flat[np.repeat(kept_part, lengths)]
    lengths = lengths[kept_part]
    rows = rows[kept_row]
    masks = UnmadeMasks(
        MaskRuns.none(len(rows)),
        flat.reshape(-1, 2),
        np.concatenate(([0], np.cumsum(lengths // 2))).astype(np.int64),
        np.concatenate(([0], np.cumsum(parts[kept_row]))).astype(np.int64),
        height[rows].astype(np.int64),
        width[rows].astype(np.int64),
    )
    return rows, masks


def _polygons_shaped(value: list[Any]) -> bool:
    """A non-empty list of lists."""
    return bool(value) and all(type(part) is list for part in value)


def _numbers(value: list[list[Any]]) -> bool:
    return all(type(c) in (int, float) for part in value for c in part)


def _rle_masks(
    values: list[Any], rows: IntArray, height: FloatArray, width: FloatArray, rejected: dict[int, str]
) -> tuple[IntArray, MaskRuns]:
    """The rows of RLE that could be read, and their masks; the others in `rejected`."""
    sizes = np.array([_size(values[row]) for row in rows.tolist()], dtype=np.int64).reshape(-1, 2)
    texts = np.array([isinstance(values[row].get("counts"), str) for row in rows.tolist()], dtype=bool)
    runs = np.array([_runs_list(values[row].get("counts")) for row in rows.tolist()], dtype=object)
    readable = (sizes >= 0).all(axis=1) & (texts | np.array([r is not None for r in runs], dtype=bool))
    rejected.update((row, BAD_RLE) for row in rows[~readable].tolist())
    rows, sizes, texts, runs = rows[readable], sizes[readable], texts[readable], runs[readable]
    strings = [values[row]["counts"].encode("ascii", "replace") for row in rows[texts].tolist()]
    decoded, decodable = from_strings(strings, sizes[texts, 0], sizes[texts, 1])
    written = _written_runs(list(runs[~texts]), sizes[~texts])
    order = np.concatenate((rows[texts], rows[~texts]))
    masks = MaskRuns.concatenate([decoded, written])
    good = well_formed(masks) & np.concatenate((decodable, np.ones(len(written), dtype=bool)))
    image_size = np.stack((height[order], width[order]), axis=1)
    fits = (~np.isfinite(image_size) | (image_size == np.concatenate((sizes[texts], sizes[~texts])))).all(
        axis=1
    )
    rejected.update((row, RUNS_SHORT) for row in order[~good].tolist())
    rejected.update((row, OTHER_SIZE) for row in order[good & ~fits].tolist())
    keep = good & fits
    return order[keep], masks[keep]


def _size(value: dict[str, Any]) -> tuple[int, int]:
    size = value.get("size")
    if isinstance(size, list) and len(size) == 2 and all(type(s) is int and s > 0 for s in size):
        return size[0], size[1]
    return -1, -1


def _runs_list(counts: Any) -> list[int] | None:
    """Runs written as a list of whole numbers (else None)."""
    if isinstance(counts, list) and set(map(type, counts)) <= {int}:
        return counts
    return None


def _written_runs(runs: list[list[int]], sizes: IntArray) -> MaskRuns:
    lengths = np.fromiter(map(len, runs), dtype=np.int64, count=len(runs))
    counts = np.fromiter(chain.from_iterable(runs), dtype=np.int64, count=int(lengths.sum()))
    return MaskRuns(
        np.minimum(counts, np.iinfo(np.uint32).max).astype(np.uint32),
        np.concatenate(([0], np.cumsum(lengths))).astype(np.int64),
        sizes[:, 0].copy(),
        sizes[:, 1].copy(),
    )
