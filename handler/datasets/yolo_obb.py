"""YOLO OBB / Ultralytics oriented boxes: one `.txt` per image, a line
`class x1 y1 x2 y2 x3 y3 x4 y4` of four corners in 0-1 image fractions, plus a trailing
confidence in predictions (`save_txt=True save_conf=True`), names as for YOLO.

Each line's corners become the rectangle holding them, in pixels where the image's size is known;
where it is not, the quadrilateral itself is kept beside it (the builder: `ParsedRows.corners`,
`BoxTable.quads`). Pure parsers only: the folder around them is read by
`textfolder`.
"""

from __future__ import annotations

import math
from typing import Final

from handler.datasets.labels import Row, TextLabels, first_tokens, is_whole, number, numbers, parse_lines
from handler.datasets.yolo import MAX_CLASS_ID
from handler.errors import quoted

EXPECTED: Final = "expected `class x1 y1 x2 y2 x3 y3 x4 y4 [confidence]`"
# A corner of a normalised box may overshoot the image by rounding, or more for a box that
# sticks out; numbers far outside 0-1 are not this format (pixel corners are DOTA's).
_FRAME: Final = (-0.5, 1.5)


def quad_row(
    class_token: str, corners: list[float], confidence: float | None, difficult: bool = False
) -> Row:
    """A box written as four corners (x1 y1 … x4 y4): the builder makes it a rectangle."""
    return Row(class_token, (math.nan,) * 4, confidence, difficult, tuple(corners))


def parse_yolo_obb_line(tokens: list[str]) -> Row | str:
    if len(tokens) not in (9, 10):
        return f"{EXPECTED}, got {len(tokens)} values"
    values = numbers(tokens)
    if isinstance(values, str):
        return values
    if not is_whole(values[0]) or values[0] > MAX_CLASS_ID:
        return f"class id {quoted(tokens[0])} is not a whole number from 0 to {MAX_CLASS_ID}"
    return quad_row(str(int(values[0])), values[1:9], values[9] if len(values) == 10 else None)


def parse_yolo_obb(text: str) -> TextLabels:
    return parse_lines(text, parse_yolo_obb_line)


def is_yolo_obb_label_file(text: str) -> bool:
    """A label file starts with a number; an empty file is an image with no boxes."""
    tokens = first_tokens(text)
    return tokens is None or number(tokens[0]) is not None


def looks_like_yolo_obb(text: str) -> bool:
    """The first line is a YOLO OBB line with its corners in the 0-1 frame."""
    tokens = first_tokens(text)
    row = parse_yolo_obb_line(tokens) if tokens is not None else None
    low, high = _FRAME
    return isinstance(row, Row) and all(low <= v <= high for v in row.corners or ())
