"""YOLO / Ultralytics labels: one `.txt` per image, a line `class x_center y_center width height`
in 0-1 image fractions, plus a trailing confidence in predictions (`save_txt=True save_conf=True`).

Pure parsers only: the folder around them is read by `textfolder`.
"""

from __future__ import annotations

import re

import numpy as np

from handler.datasets.labels import Row, TextLabels, first_tokens, is_whole, number, numbers, parse_lines
from handler.errors import quoted

EXPECTED = "expected `class x_center y_center width height [confidence]`"
# Class ids index a names list: a larger id is a typo or damage, refused before any integer cast.
MAX_CLASS_ID = 2**31 - 1
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"


def _uniform(values: int) -> re.Pattern[str]:
    """Every line a whole class and `values - 1` plain numbers, no blank line but at the end."""
    line = rf"[ \t]*\d+(?:[ \t]+{_NUMBER}){{{values - 1}}}[ \t]*"
    return re.compile(rf"(?:{line}\r?\n)*(?:{line})?\s*")


_UNIFORM = {5: _uniform(5), 6: _uniform(6)}


def parse_yolo_line(tokens: list[str]) -> Row | str:
    if len(tokens) not in (5, 6):
        return f"{EXPECTED}, got {len(tokens)} values"
    values = numbers(tokens)
    if isinstance(values, str):
        return values
    if not is_whole(values[0]):
        return f"class id {quoted(tokens[0])} is not a whole number"
    if not 0 <= values[0] <= MAX_CLASS_ID:
        return f"class id {quoted(tokens[0])} is out of range: expected 0 to {MAX_CLASS_ID}"
    x_center, y_center, width, height = values[1:5]
    return Row(
        class_token=str(int(values[0])),
        xyxy=(x_center - width / 2, y_center - height / 2, x_center + width / 2, y_center + height / 2),
        confidence=values[5] if len(values) == 6 else None,
    )


def _parse_uniform(text: str) -> TextLabels | None:
    """The common file (all lines GT-shaped, or all with a confidence) in one numpy call; None
    when any line is not, so that the line-by-line path names it."""
    width = next((k for k, pattern in _UNIFORM.items() if pattern.fullmatch(text)), None)
    if width is None:
        return None
    values = np.array(text.split(), dtype=np.float64).reshape(-1, width)
    if (values[:, 0] > MAX_CLASS_ID).any():
        return None
    half = values[:, 3:5] / 2
    xyxy = np.concatenate([values[:, 1:3] - half, values[:, 1:3] + half], axis=1)
    confidence = values[:, 5] if width == 6 else np.full(len(values), np.nan)
    return TextLabels(
        xyxy=xyxy,
        class_token=[str(c) for c in values[:, 0].astype(np.int64).tolist()],
        confidence=confidence,
        has_confidence=np.full(len(values), width == 6),
        difficult=np.zeros(len(values), dtype=bool),
        line=np.arange(1, len(values) + 1, dtype=np.int64),
        rejected=[],
    )


def parse_yolo(text: str) -> TextLabels:
    uniform = _parse_uniform(text)
    return uniform if uniform is not None else parse_lines(text, parse_yolo_line)


def is_yolo_label_file(text: str) -> bool:
    """A label file starts with a number (train.txt lists image paths, READMEs start with words);
    an empty file is one too: an image with no boxes."""
    tokens = first_tokens(text)
    return tokens is None or number(tokens[0]) is not None


def looks_like_yolo(text: str) -> bool:
    """Most lines are YOLO lines inside the 0-1 frame (pixel `cls conf x1 y1 x2 y2` lines are not)."""
    rows = [parse_yolo_line(line.split()) for line in text.splitlines() if line.strip()]
    boxes = [r for r in rows if isinstance(r, Row)]
    inside = [r for r in boxes if all(-0.5 <= v <= 1.5 for v in r.xyxy)]
    return bool(boxes) and 2 * len(inside) >= len(rows)
