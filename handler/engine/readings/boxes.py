"""The box convention: which four numbers a box was written as (`x y w h`, `x1 y1 x2 y2`, `cx cy w h`).

A torchvision output dumped as COCO `bbox` is corners read as corner and size; a YOLO-style
centre read as a corner. The numbers written are recovered from the corners the reader made
(`written_numbers`) and read again in the other convention.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

import numpy as np

from handler.boxes import BOX_KINDS, BoxKind, Parsed, ParsedRows, corners
from handler.engine.readings.reading import (
    Evidence,
    Family,
    Reading,
    Transform,
    boxes_misplaced,
    written_numbers,
)

KEY: Final = "PRED_BOX"
WORDS: Final = {
    "x y w h": "[x, y, width, height]",
    "x1 y1 x2 y2": "[x1, y1, x2, y2]",
    "cx cy w h": "[cx, cy, w, h]",
}
# A convention is a candidate when this share of the sampled rows make a box in it.
VALID_SHARE_MIN: Final = 0.9


def _read_as(kind: BoxKind) -> Transform:
    def transform(parsed: Parsed) -> tuple[ParsedRows, list[str]]:
        rows = parsed.rows
        xyxy, _ = corners(kind, written_numbers(rows)), None
        return replace(rows, xyxy=xyxy, convention=kind), parsed.class_names

    return transform


def reading(value: str) -> Reading:
    """PRED_BOX's reading: `value` is one of BOX_KINDS (ValueError names them)."""
    kind = " ".join(value.replace(",", " ").split())
    if kind not in BOX_KINDS:
        raise ValueError(f"{value!r} is not a box convention: expected one of {' | '.join(BOX_KINDS)}")
    typed: BoxKind = kind
    return Reading("box", KEY, kind, f"boxes written as {WORDS[kind]}", _read_as(typed))


def _valid_share(rows: ParsedRows, kind: BoxKind) -> float:
    xyxy, _ = corners(kind, written_numbers(rows)), None
    with np.errstate(invalid="ignore"):
        valid = (xyxy[:, 2] > xyxy[:, 0]) & (xyxy[:, 3] > xyxy[:, 1])
    return float(np.mean(valid)) if len(valid) else 0.0


def candidates(evidence: Evidence) -> list[Reading]:
    """Every other convention in which nearly every sampled row still makes a box."""
    rows = evidence.sample()
    others = [kind for kind in BOX_KINDS if kind != rows.convention]
    return [reading(kind) for kind in others if _valid_share(rows, kind) >= VALID_SHARE_MIN]


FAMILY: Final = Family("box", KEY, boxes_misplaced, candidates)
