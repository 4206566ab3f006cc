"""The coordinate frame: pixels, normalised 0-1, a network input's frame, or a global scale.

A detector's boxes are often left in the frame it saw: normalised (times each image's width and
height), scaled back by the sizes swapped (a post-processing that took `(height, width)` given
`(width, height)`), or the network
input the image was resized (stretched) or letterboxed to: a square of side S, scaled to fit and
padded to the centre (YOLOv5/v8) or at the bottom-right only (YOLOX: no offset), or the minimal
rectangle (long side S, the short side padded to a multiple of the stride, half the pad on each
side: YOLO validators' `rect` mode). Each frame is undone with each image's own size, so the
parameters come from the data (the image sizes, the usual network sizes and strides), never
fitted to the boxes: a model with a habit is not a frame.
"""

from __future__ import annotations

from functools import cached_property
from typing import Final

import msgspec
import numpy as np
from msgspec.structs import replace

from handler.boxes import FloatArray, Parsed, ParsedRows, box_area
from handler.engine.evaluation import Evaluation
from handler.readings.reading import Reading, Transform, finite_number, pixel_frame, side_key

OPTION: Final = "FRAME"
# The inputs detectors are commonly run at (YOLO, SSD, DETR, EfficientDet exports), and strides.
NETWORK_SIZES: Final = (320, 416, 512, 608, 640, 800, 1024, 1280)
# The strides a rectangle is padded to: 32 (P5 models), and 64 for the large inputs of P6 models.
STRIDES: Final = (32, 64)
P6_FROM: Final = 1024
MODES: Final = ("letterbox", "letterbox-top-left", "resized")
HOW: Final = {
    "letterbox": "letterboxed (scaled to fit, padded to the centre)",
    "letterbox-top-left": "letterboxed (scaled to fit, padded at the bottom and right)",
    "resized": "resized (stretched)",
}
NORMALIZED: Final = "normalized"
SWAPPED: Final = "swapped"
SCALE: Final = "scale"
STRIDE: Final = "stride"
# The rows fit a frame of side S when their far corners reach between these shares of S (a box
# may stick out of its frame a little: a detector's jitter, rounding).
FIT_RANGE: Final = (0.5, 1.1)
EXTENT_QUANTILE: Final = 0.95
# Coordinates that all stay below this are normalised ones (rounding may overshoot 1 a little).
NORMALIZED_EXTENT: Final = 1.05
# A frame whose undoing moves the boxes less than this (as a share of the image) is the image's.
SAME_FRAME: Final = 0.002
# A box-size ratio outside these bounds (predictions / GT, medians) is a scale worth trying.
SCALE_RANGE: Final = (0.8, 1.25)


def row_sizes(parsed: Parsed, rows: ParsedRows) -> tuple[FloatArray, FloatArray]:
    """Each row's image width and height, NaN where unknown (a row on no known image)."""
    widths, heights = parsed.images.widths, parsed.images.heights
    known = (rows.image >= 0) & (rows.image < len(widths))
    at = np.where(known, rows.image, 0)
    nan = np.full(len(rows), np.nan)
    if not len(widths):
        return nan, nan
    return np.where(known, widths[at], np.nan), np.where(known, heights[at], np.nan)


def _network_frame(
    mode: str, side: int, stride: int | None, width: FloatArray, height: FloatArray
) -> tuple[tuple[FloatArray, FloatArray], tuple[FloatArray, FloatArray]]:
    """Per row, the (x, y) pad and the (x, y) factor from the network's frame back to the image's."""
    ratio = side / np.maximum(width, height)
    if mode == "resized":
        return (width * 0, height * 0), (width / side, height / side)
    if mode == "letterbox-top-left":
        return (width * 0, height * 0), (1 / ratio, 1 / ratio)
    if stride is None:  # the square
        pad = ((side - width * ratio) / 2, (side - height * ratio) / 2)
    else:  # the minimal rectangle: each side rounded up to the stride
        scaled = (width * ratio, height * ratio)
        pad = tuple(np.ceil(np.round(s, 6) / stride) * stride / 2 - s / 2 for s in scaled)  # type: ignore[assignment]
    return pad, (1 / ratio, 1 / ratio)


class _Corners(msgspec.Struct, frozen=True, dict=True):
    """Rows' corners and their images' sizes, looked up once for every frame tried on them."""

    xyxy: FloatArray
    width: FloatArray
    height: FloatArray

    @classmethod
    def of(cls, parsed: Parsed, rows: ParsedRows) -> _Corners:
        return cls(rows.xyxy, *row_sizes(parsed, rows))

    @cached_property
    def sizes(self) -> FloatArray:
        """(n, 4): each row's image width, height, width, height."""
        return np.stack((self.width, self.height, self.width, self.height), axis=1)

    def undone(self, mode: str, side: int, stride: int | None) -> FloatArray:
        """The corners with the network frame undone, in each image's pixels."""
        (pad_x, pad_y), (scale_x, scale_y) = _network_frame(mode, side, stride, self.width, self.height)
        pads = np.stack((pad_x, pad_y, pad_x, pad_y), axis=1)
        scales = np.stack((scale_x, scale_y, scale_x, scale_y), axis=1)
        undone: FloatArray = (self.xyxy - pads) * scales
        return undone

    def inside(self, xyxy: FloatArray) -> float:
        """The share of the boxes `xyxy` (pixels) that lie in their image (NaN sizes: counted in)."""
        sizes = self.sizes
        with np.errstate(invalid="ignore"):
            low = xyxy[:, :2] >= -INSIDE_SLACK * sizes[:, :2]
            high = xyxy[:, 2:] <= (1 + INSIDE_SLACK) * sizes[:, 2:]
        unknown = ~np.isfinite(sizes[:, :2])
        return float(np.mean(((low & high) | unknown).all(axis=1))) if len(xyxy) else 0.0

    def moved(self, mode: str, side: int, stride: int | None, inside_min: float) -> float:
        """The mean shift of the corners, as a share of their image, when the frame is undone (the
        mean: a frame that moves only the images of another size than most still moves); 0 when
        fewer than `inside_min` of the boxes would stay in their image (not their frame)."""
        undone = self.undone(mode, side, stride)
        if self.inside(undone) < inside_min:
            return 0.0
        with np.errstate(invalid="ignore"):
            shift = np.abs(undone - self.xyxy) / self.sizes
        finite = shift[np.isfinite(shift).all(axis=1)]
        return float(np.mean(finite)) if len(finite) else 0.0


def _network(mode: str, side: int, stride: int | None) -> Transform:
    def transform(parsed: Parsed) -> tuple[ParsedRows, list[str]]:
        rows = parsed.rows
        return replace(rows, xyxy=_Corners.of(parsed, rows).undone(mode, side, stride)), parsed.class_names

    return transform


def _normalized(parsed: Parsed) -> tuple[ParsedRows, list[str]]:
    return replace(parsed.rows, normalized=np.ones(len(parsed.rows), dtype=bool)), parsed.class_names


def _swapped(parsed: Parsed) -> tuple[ParsedRows, list[str]]:
    """Fractions scaled to pixels by (height, width) where (width, height) was meant (a
    post-processing handed `(h, w)` where it takes `(w, h)`): x times width / height, y the inverse."""
    rows = parsed.rows
    width, height = row_sizes(parsed, rows)
    factor = np.stack((width / height, height / width, width / height, height / width), axis=1)
    return replace(rows, xyxy=rows.xyxy * factor), parsed.class_names


def _scaled(factor: float) -> Transform:
    def transform(parsed: Parsed) -> tuple[ParsedRows, list[str]]:
        return replace(parsed.rows, xyxy=parsed.rows.xyxy * factor), parsed.class_names

    return transform


def _network_reading(words: list[str], key: str, side_name: str) -> Reading | None:
    """`letterbox 640`, `letterbox 640 stride 32`, `letterbox-top-left 640`, `resized 416`."""
    if len(words) not in (2, 4) or words[0] not in MODES:
        return None
    number = finite_number(words[1])
    stride = finite_number(words[3]) if len(words) == 4 and words[2] == STRIDE else None
    if number is None or number < 1 or number != int(number) or (len(words) == 4 and stride is None):
        return None
    if stride is not None and (words[0] != "letterbox" or stride < 1 or stride != int(stride)):
        return None
    mode, side = words[0], int(number)
    strided = None if stride is None else int(stride)
    value = f"{mode} {side}" + ("" if strided is None else f" {STRIDE} {strided}")
    shape = f"{side}x{side}" if strided is None else f"long side {side}, padded to a multiple of {strided}"
    says = f"boxes in the network input ({shape}) the images were {HOW[mode]} to"
    return Reading("frame", key, value, says, _network(mode, side, strided), side=side_name)


def reading(value: str, side: str = "pred") -> Reading:
    """`{SIDE}_FRAME`'s reading: `normalized`, `swapped`, `letterbox 640`, `letterbox 640
    stride 32`, `letterbox-top-left 640`, `resized 640` or `scale 0.5`."""
    words, key = value.lower().replace("normalised", NORMALIZED).split(), side_key(side, OPTION)
    if words == [NORMALIZED]:
        says = "boxes normalised to 0-1 (times each image's size)"
        return Reading("frame", key, NORMALIZED, says, _normalized, side=side)
    if words == [SWAPPED]:
        says = "boxes scaled to pixels by (height, width) instead of (width, height)"
        return Reading("frame", key, SWAPPED, says, _swapped, side=side)
    number = finite_number(words[1]) if len(words) == 2 else None
    if number is not None and number > 0 and words[0] == SCALE:
        text = f"{number:g}"
        return Reading(
            "frame", key, f"{SCALE} {text}", f"coordinates to multiply by {text}", _scaled(number), side=side
        )
    network = _network_reading(words, key, side)
    if network is not None:
        return network
    raise ValueError(
        f"{value!r} is not a coordinate frame: expected `normalized`, `swapped`, `letterbox SIZE`, "
        "`letterbox SIZE stride N`, `letterbox-top-left SIZE`, `resized SIZE` or `scale FACTOR` "
        "(e.g. `letterbox 640`)"
    )


# Boxes read in their own frame lie in their image: at least this share of them, within INSIDE_SLACK.
INSIDE_SHARE_MIN: Final = 0.9
INSIDE_SLACK: Final = 0.02


def inside_share(parsed: Parsed, rows: ParsedRows, xyxy: FloatArray) -> float:
    """The share of the rows whose box `xyxy` (pixels) lies in its image (NaN sizes: counted in)."""
    return _Corners.of(parsed, rows).inside(xyxy)


def box_sizes(xyxy: FloatArray) -> FloatArray:
    with np.errstate(invalid="ignore", over="ignore"):
        sizes: FloatArray = np.sqrt(np.abs(box_area(xyxy)))
    return sizes[np.isfinite(sizes) & (sizes > 0)]


def scale_candidate(xyxy: FloatArray, other: FloatArray, side: str) -> Reading | None:
    """The scale that brings the median box size of `xyxy` to `other`'s, when they differ by
    more than SCALE_RANGE allows."""
    mine, theirs = box_sizes(xyxy), box_sizes(other)
    if not len(mine) or not len(theirs):
        return None
    ratio = float(np.quantile(mine, 0.5) / np.quantile(theirs, 0.5))
    if SCALE_RANGE[0] <= ratio <= SCALE_RANGE[1]:
        return None
    return reading(f"{SCALE} {float(f'{1 / ratio:.3g}'):g}", side)


# A pair of boxes is one scale apart when its four coordinate ratios agree within this factor; the
# scale most such pairs agree on (bins of this width in log2) is a part's, with at least PAIRS_MIN pairs.
PAIR_AGREEMENT: Final = 1.05
SCALE_BIN: Final = 0.05
SCALE_PAIRS_MIN: Final = 5


def fitted_scale(pred: FloatArray, gt: FloatArray, side: str) -> Reading | None:
    """The scale most pairs of boxes (`pred[i]`, `gt[i]`, pixels) are apart by, every coordinate of
    the pair multiplied alike (a resolution mix-up moves the corners as it grows the box), when it
    is outside SCALE_RANGE: a few confident pairs decide, the others are the model's own errors."""
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(gt > 1, pred / gt, np.nan)
    ratio = ratio[(np.isfinite(ratio).sum(axis=1) >= 2) & ~(ratio <= 0).any(axis=1)]
    if not len(ratio):
        return None
    agree = np.nanmax(ratio, axis=1) <= PAIR_AGREEMENT * np.nanmin(ratio, axis=1)
    logs = np.log2(np.nanmedian(ratio[agree], axis=1)) if agree.any() else np.zeros(0)
    logs = logs[np.isfinite(logs)]
    if len(logs) < SCALE_PAIRS_MIN:
        return None
    bins = np.round(logs / SCALE_BIN).astype(np.int64)
    values, counts = np.unique(bins, return_counts=True)
    top = values[np.argmax(counts)]
    if counts.max() < SCALE_PAIRS_MIN:
        return None
    factor = float(2 ** np.median(logs[bins == top]))
    if SCALE_RANGE[0] <= factor <= SCALE_RANGE[1]:
        return None
    return reading(f"{SCALE} {float(f'{1 / factor:.3g}'):g}", side)


# Rows a frame's shift is measured on: a mean over a few thousand corners is plenty.
MOVED_ROWS: Final = 200


def _network_candidates(
    parsed: Parsed, rows: ParsedRows, extent: float, side: str, inside_min: float, every_size: bool
) -> list[Reading]:
    if len(rows) > MOVED_ROWS:
        keep = np.zeros(len(rows), dtype=bool)
        keep[np.linspace(0, len(rows) - 1, MOVED_ROWS).astype(np.int64)] = True
        rows = rows.subset(keep)
    values = [
        f"{mode} {size}" + suffix
        for size in NETWORK_SIZES
        if every_size or FIT_RANGE[0] * size <= extent <= FIT_RANGE[1] * size
        for mode, suffix in [(m, "") for m in MODES]
        + [("letterbox", f" {STRIDE} {s}") for s in STRIDES if s == STRIDES[0] or size >= P6_FROM]
    ]
    corners, found = _Corners.of(parsed, rows), []
    for value in values:
        words = value.split()
        stride = int(words[3]) if len(words) == 4 else None
        if corners.moved(words[0], int(words[1]), stride, inside_min) > SAME_FRAME:
            found.append(reading(value, side))
    return found


def forced(rows: ParsedRows, side: str) -> list[Reading]:
    """The frame the coordinates force, whatever else: normalised when they all stay within 0-1."""
    corners = rows.xyxy[np.isfinite(rows.xyxy).all(axis=1)]
    if not pixel_frame(rows) or not len(corners):
        return []
    extent = float(np.quantile(np.abs(corners).max(axis=1), EXTENT_QUANTILE))
    return [reading(NORMALIZED, side)] if extent <= NORMALIZED_EXTENT else []


def candidates(
    parsed: Parsed,
    rows: ParsedRows,
    other_xyxy: FloatArray,
    other_normalized: bool,
    side: str,
    inside_min: float = INSIDE_SHARE_MIN,
    every_size: bool = False,
) -> list[Reading]:
    """Frames the sampled rows' coordinates fit: normalised, network inputs, a global scale.

    `rows` are the side's sampled rows (already read in the box convention tried), `other_xyxy`
    a sample of the other side's boxes (what a scale is read against); a network frame is one
    whose undoing leaves `inside_min` of the boxes in their images (fewer: a frame of part of them);
    each network size the rows' far corners fit, or `every_size` (a part of the rows in a frame: the
    others' extent says nothing of its size)."""
    if not pixel_frame(rows) or other_normalized:
        return []
    corners = rows.xyxy[np.isfinite(rows.xyxy).all(axis=1)]
    if not len(corners):
        return []
    extent = float(np.quantile(np.abs(corners).max(axis=1), EXTENT_QUANTILE))
    if extent <= NORMALIZED_EXTENT:
        return [reading(NORMALIZED, side)]
    scale = scale_candidate(rows.xyxy, other_xyxy, side)
    network = _network_candidates(parsed, rows, extent, side, inside_min, every_size)
    found = [reading(SWAPPED, side), *network]
    return found + ([scale] if scale is not None else [])


def size_ratio(evaluation: Evaluation) -> float | None:
    """The median GT / prediction box size over the matched pairs (None without pairs): what a
    scale read from the box sizes alone is refined by, on the boxes that met."""
    match = evaluation.outcomes.match
    matched = np.flatnonzero(match.pred_match >= 0)
    if not len(matched):
        return None
    gt_sizes = box_sizes(evaluation.gt.xyxy[match.pred_match[matched]])
    pred_sizes = box_sizes(evaluation.pred.xyxy[matched])
    if len(gt_sizes) != len(matched) or len(pred_sizes) != len(matched):
        return None
    return float(np.quantile(gt_sizes / pred_sizes, 0.5))


def rescaled(found: Reading, factor: float) -> Reading:
    """A scale reading multiplied by `factor` (any other reading as it is)."""
    words = found.value.split()
    if words[0] != SCALE:
        return found
    return reading(f"{SCALE} {float(f'{float(words[1]) * factor:.4g}'):g}", found.side)
