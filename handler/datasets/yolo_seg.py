"""YOLO-seg / Ultralytics segmentation labels: one `.txt` per image, a line `class x1 y1 … xn yn`
of a polygon's points in 0-1 image fractions (three points or more), plus a trailing confidence
in predictions (`save_txt=True save_conf=True`): an odd count of numbers after the class ends
with one. Names as for YOLO.

Each polygon is drawn in pixels of its image as pycocotools draws a COCO polygon, so the image
sizes are needed (`textfolder`: `sizes.json`, else the ground truth's). Pure parsers only: the
folder around them is read by `textfolder`. A file is read in numpy calls over all its lines;
a file with a line that is not a polygon is read line by line, so that each such line is named.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np

from handler.boxes import BoolArray, FloatArray, IntArray
from handler.datasets.labels import TextLabels, first_tokens, is_whole, number, numbers
from handler.datasets.region_masks import within_runs
from handler.datasets.yolo import MAX_CLASS_ID
from handler.errors import quoted

EXPECTED: Final = "expected `class x1 y1 x2 y2 x3 y3 … [confidence]` (a polygon of 3 points or more)"
MIN_POINTS: Final = 3
# A YOLO OBB line's tokens (four corners, with or without a confidence): a folder whose lines
# are all of these is OBB's.
_OBB_TOKENS: Final = (9, 10)
# Points of a normalised polygon may overshoot the image by rounding; numbers far outside 0-1
# are another format's pixels.
_FRAME: Final = (-0.5, 1.5)
# A line's end as a token of its own (whitespace splitting would take it for a space).
_LINE_END: Final = "\x00"
# Lines looked at to recognise the format, at most.
_PROBE: Final = 20


def _lines_of(text: str) -> tuple[IntArray, list[str]]:
    """Each token's line (0-based) and the tokens themselves, the lines' ends left out."""
    ends = text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", f" {_LINE_END} ")
    tokens = np.array(ends.split(), dtype=str)
    end = tokens == _LINE_END
    line: IntArray = np.cumsum(end)[~end].astype(np.int64)
    return line, tokens[~end].tolist()


def _why(tokens: list[str]) -> str | None:
    """Why a line is not a polygon, in a line-by-line read."""
    values = numbers(tokens)
    if isinstance(values, str):
        return values
    if len(values) < 1 + 2 * MIN_POINTS:
        return f"{EXPECTED}, got {len(values)} values"
    if not all(map(math.isfinite, values)):
        return "expected finite numbers"
    if not is_whole(values[0]) or values[0] > MAX_CLASS_ID:
        return f"class id {quoted(tokens[0])} is not a whole number from 0 to {MAX_CLASS_ID}"
    return None


def parse_yolo_seg(text: str) -> TextLabels:
    line, tokens = _lines_of(text)
    try:
        values = np.array(tokens, dtype=np.float64)
    except ValueError:  # a token that is not a number: the lines are named one by one
        return _line_by_line(text)
    starts = np.flatnonzero(np.diff(line, prepend=-1) != 0)
    lengths = np.diff(np.append(starts, len(line)))
    classes = values[starts]
    shaped = (lengths >= 1 + 2 * MIN_POINTS) & (classes >= 0) & (classes <= MAX_CLASS_ID)
    if not (shaped & (classes == np.floor(classes))).all() or not np.isfinite(values).all():
        return _line_by_line(text)
    return _labels(values, starts, lengths, line[starts] + 1, [])


def _labels(
    values: FloatArray, starts: IntArray, lengths: IntArray, line: IntArray, rejected: list[tuple[int, str]]
) -> TextLabels:
    """The polygons of well-formed lines: `values[starts[k]:starts[k] + lengths[k]]` is line k's
    class, its points and its confidence when the count of its numbers after the class is odd."""
    scored: BoolArray = (lengths - 1) % 2 == 1
    points = (lengths - 1 - scored) // 2
    coordinate = np.repeat(starts + 1, 2 * points) + within_runs(2 * points)
    xy = values[coordinate].reshape(-1, 2)
    xyxy = np.full((len(starts), 4), np.nan)
    if len(starts):
        first = np.concatenate(([0], np.cumsum(points)[:-1]))
        xyxy[:, :2] = np.column_stack([np.minimum.reduceat(xy[:, a], first) for a in (0, 1)])
        xyxy[:, 2:] = np.column_stack([np.maximum.reduceat(xy[:, a], first) for a in (0, 1)])
    confidence = np.where(scored, values[np.minimum(starts + lengths - 1, len(values) - 1)], math.nan)
    return TextLabels(
        xyxy=xyxy,
        class_token=[str(c) for c in values[starts].astype(np.int64).tolist()],
        confidence=confidence,
        has_confidence=scored,
        difficult=np.zeros(len(starts), dtype=bool),
        line=line.astype(np.int64),
        rejected=rejected,
        polygon_xy=xy,
        polygon_points=points.astype(np.int64),
    )


def _line_by_line(text: str) -> TextLabels:
    """The same, a line at a time: each line that is not a polygon named with why."""
    kept: list[list[float]] = []
    lines: list[int] = []
    rejected: list[tuple[int, str]] = []
    for number_, raw in enumerate(text.splitlines(), start=1):
        tokens = raw.split()
        if not tokens:
            continue
        why = _why(tokens)
        if why is not None:
            rejected.append((number_, why))
            continue
        kept.append([float(t) for t in tokens])
        lines.append(number_)
    lengths = np.array([len(k) for k in kept], dtype=np.int64)
    values = np.array([v for k in kept for v in k], dtype=np.float64)
    starts = np.cumsum(lengths) - lengths
    return _labels(values, starts, lengths, np.array(lines, dtype=np.int64), rejected)


def is_yolo_seg_label_file(text: str) -> bool:
    """A label file starts with a number; an empty file is an image with nothing on it."""
    tokens = first_tokens(text)
    return tokens is None or number(tokens[0]) is not None


def _inside(tokens: list[str]) -> bool:
    """A polygon line's points in the 0-1 frame (its confidence, if any, left out)."""
    low, high = _FRAME
    points = (len(tokens) - 1) // 2
    return all(low <= float(v) <= high for v in tokens[1 : 1 + 2 * points])


def looks_like_yolo_seg(text: str) -> bool:
    """Most of the first lines are polygons in the 0-1 frame, one of them not four corners
    (YOLO OBB's)."""
    rows = [line.split() for line in text.splitlines()[:_PROBE] if line.strip()]
    polygons = [tokens for tokens in rows if _why(tokens) is None]
    inside = [tokens for tokens in polygons if _inside(tokens)]
    return 2 * len(inside) >= len(rows) > 0 and any(len(tokens) not in _OBB_TOKENS for tokens in polygons)
