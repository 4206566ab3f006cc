"""The coordinate frame: pixels, normalised 0-1, a network input's frame, or a global scale.

A detector's boxes are often left in the frame it saw: normalised, or the square input it was
resized (stretched) or letterboxed (scaled to fit, padded to the centre) to, e.g. 640 by 640.
Each candidate frame is undone with each image's own size, so only a frame that the rows'
coordinates fit is tried.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Final

import numpy as np

from handler.boxes import FloatArray, Parsed, ParsedRows, box_area
from handler.engine.evaluation import Evaluation
from handler.engine.readings.reading import (
    Evidence,
    Family,
    Reading,
    Transform,
    boxes_misplaced,
    pixel_frame,
)

KEY: Final = "PRED_FRAME"
# The square inputs detectors are commonly run at (YOLO, SSD, DETR, EfficientDet exports).
NETWORK_SIZES: Final = (320, 416, 512, 608, 640, 800, 1024, 1280)
MODES: Final = ("letterbox", "resized")
NORMALIZED: Final = "normalized"
SCALE: Final = "scale"
# The rows fit a frame of side S when their far corners reach between these shares of S.
FIT_RANGE: Final = (0.5, 1.1)
EXTENT_QUANTILE: Final = 0.95
# Coordinates that all stay below this are normalised ones (rounding may overshoot 1 a little).
NORMALIZED_EXTENT: Final = 1.05
# A frame whose undoing moves the boxes less than this (as a share of the image) is the image's.
SAME_FRAME: Final = 0.02
# A box-size ratio outside these bounds (predictions / GT, medians) is a scale worth trying.
SCALE_RANGE: Final = (0.8, 1.25)


def _sizes(parsed: Parsed, rows: ParsedRows) -> tuple[FloatArray, FloatArray]:
    """Each row's image width and height, NaN where unknown (a row on no known image)."""
    widths, heights = parsed.images.widths, parsed.images.heights
    known = (rows.image >= 0) & (rows.image < len(widths))
    at = np.where(known, rows.image, 0)
    nan = np.full(len(rows), np.nan)
    if not len(widths):
        return nan, nan
    return np.where(known, widths[at], np.nan), np.where(known, heights[at], np.nan)


def _undone(parsed: Parsed, mode: str, side: int) -> FloatArray:
    """The rows' corners with the network frame of `side` undone, in each image's pixels."""
    rows = parsed.rows
    width, height = _sizes(parsed, rows)
    ratio = side / np.maximum(width, height)
    if mode == "resized":
        pad, scale = (width * 0, height * 0), (width / side, height / side)
    else:
        pad, scale = ((side - width * ratio) / 2, (side - height * ratio) / 2), (1 / ratio, 1 / ratio)
    pads: FloatArray = np.stack((pad[0], pad[1], pad[0], pad[1]), axis=1).astype(np.float64)
    scales: FloatArray = np.stack((scale[0], scale[1], scale[0], scale[1]), axis=1).astype(np.float64)
    undone: FloatArray = (rows.xyxy - pads) * scales
    return undone


def _network(mode: str, side: int) -> Transform:
    def transform(parsed: Parsed) -> tuple[ParsedRows, list[str]]:
        return replace(parsed.rows, xyxy=_undone(parsed, mode, side)), parsed.class_names

    return transform


def _normalized(parsed: Parsed) -> tuple[ParsedRows, list[str]]:
    return replace(parsed.rows, normalized=np.ones(len(parsed.rows), dtype=bool)), parsed.class_names


def _scaled(factor: float) -> Transform:
    def transform(parsed: Parsed) -> tuple[ParsedRows, list[str]]:
        return replace(parsed.rows, xyxy=parsed.rows.xyxy * factor), parsed.class_names

    return transform


def reading(value: str) -> Reading:
    """PRED_FRAME's reading: `normalized`, `letterbox 640`, `resized 640` or `scale 0.5`."""
    words = value.lower().split()
    if words == [NORMALIZED] or words == ["normalised"]:
        return Reading(
            "frame", KEY, NORMALIZED, "boxes normalised to 0-1 (times each image's size)", _normalized
        )
    number = _number(words[1]) if len(words) == 2 else None
    if number is not None and number > 0 and words[0] == SCALE:
        text = f"{number:g}"
        return Reading("frame", KEY, f"{SCALE} {text}", f"coordinates to multiply by {text}", _scaled(number))
    if number is not None and number >= 1 and number == int(number) and words[0] in MODES:
        side, mode = int(number), words[0]
        how = "letterboxed (scaled to fit, padded)" if mode == "letterbox" else "resized (stretched)"
        says = f"boxes in the {side}x{side} network input the images were {how} to"
        return Reading("frame", KEY, f"{mode} {side}", says, _network(mode, side))
    raise ValueError(
        f"{value!r} is not a coordinate frame: expected `normalized`, `letterbox SIZE`, `resized SIZE` "
        "or `scale FACTOR` (e.g. `letterbox 640`)"
    )


def _number(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _moved(parsed: Parsed, rows: ParsedRows, mode: str, side: int) -> float:
    """The median shift of the sampled corners, as a share of their image, when the frame is undone."""
    undone = _undone(replace(parsed, rows=rows), mode, side)
    width, height = _sizes(parsed, rows)
    scale = np.stack((width, height, width, height), axis=1)
    with np.errstate(invalid="ignore"):
        shift = np.abs(undone - rows.xyxy) / scale
    finite = shift[np.isfinite(shift).all(axis=1)]
    return float(np.median(finite)) if len(finite) else 0.0


def _box_sizes(xyxy: FloatArray) -> FloatArray:
    with np.errstate(invalid="ignore"):
        sizes: FloatArray = np.sqrt(np.abs(box_area(xyxy)))
    return sizes[np.isfinite(sizes) & (sizes > 0)]


def _scale_candidate(evidence: Evidence, rows: ParsedRows) -> Reading | None:
    pred, gt = (
        _box_sizes(rows.xyxy),
        _box_sizes(evidence.gt.boxes.xyxy[:: max(1, len(evidence.gt.boxes) // 20_000)]),
    )
    if not len(pred) or not len(gt) or evidence.gt.normalized:
        return None
    ratio = float(np.median(pred) / np.median(gt))
    if SCALE_RANGE[0] <= ratio <= SCALE_RANGE[1]:
        return None
    return reading(f"{SCALE} {float(f'{1 / ratio:.3g}'):g}")


def candidates(evidence: Evidence) -> list[Reading]:
    """Frames the sampled rows' coordinates fit: normalised, network inputs, a global scale."""
    rows = evidence.sample()
    if not pixel_frame(rows) or evidence.gt.normalized:
        return []
    corners = rows.xyxy[np.isfinite(rows.xyxy).all(axis=1)]
    if not len(corners):
        return []
    extent = float(np.quantile(np.abs(corners).max(axis=1), EXTENT_QUANTILE))
    if extent <= NORMALIZED_EXTENT:
        return [reading(NORMALIZED)]
    found = [
        reading(f"{mode} {side}")
        for side in NETWORK_SIZES
        if FIT_RANGE[0] * side <= extent <= FIT_RANGE[1] * side
        for mode in MODES
        if _moved(evidence.parsed, rows, mode, side) > SAME_FRAME
    ]
    scale = _scale_candidate(evidence, rows)
    return found + ([scale] if scale is not None else [])


FAMILY: Final = Family("frame", KEY, boxes_misplaced, candidates)


def size_ratio(evaluation: Evaluation) -> float | None:
    """The median GT / prediction box size over the matched pairs (None without pairs): what a
    scale read from the box sizes alone is refined by, on the boxes that met."""
    match = evaluation.outcomes.match
    matched = np.flatnonzero(match.pred_match >= 0)
    if not len(matched):
        return None
    gt_sizes = _box_sizes(evaluation.gt.xyxy[match.pred_match[matched]])
    pred_sizes = _box_sizes(evaluation.pred.xyxy[matched])
    if len(gt_sizes) != len(matched) or len(pred_sizes) != len(matched):
        return None
    return float(np.median(gt_sizes / pred_sizes))


def rescaled(found: Reading, factor: float) -> Reading:
    """A scale reading multiplied by `factor` (any other reading as it is)."""
    words = found.value.split()
    if words[0] != SCALE:
        return found
    return reading(f"{SCALE} {float(f'{float(words[1]) * factor:.4g}'):g}")
