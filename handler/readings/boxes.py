"""The box convention: which four numbers a box was written as, and in which axis order.

`x y w h`, `x1 y1 x2 y2`, `cx cy w h`, each also with y before x (`y x h w`, `y1 x1 y2 x2`,
`cy cx h w`: TF object detection writes `[ymin, xmin, ymax, xmax]`). A torchvision output dumped as
COCO `bbox` is corners read as corner and size. The numbers written are recovered from the corners
the reader made (`written_numbers`) and read again in the other convention.
"""

from __future__ import annotations

from typing import Final

import numpy as np
from msgspec.structs import replace

from handler.boxes import BOX_OPTIONS, Y_FIRST, FloatArray, Parsed, ParsedRows, corners
from handler.readings.reading import Reading, Transform, side_key, written_numbers

OPTION: Final = "BOX"
WORDS: Final = {
    "x y w h": "[x, y, width, height]",
    "x1 y1 x2 y2": "[x1, y1, x2, y2]",
    "cx cy w h": "[cx, cy, w, h]",
}
SWAPPED_WORDS: Final = {
    "y x h w": "[y, x, height, width]",
    "y1 x1 y2 x2": "[y1, x1, y2, x2]",
    "cy cx h w": "[cy, cx, h, w]",
}
KINDS: Final = BOX_OPTIONS
# A convention is a candidate when this share of the sampled rows make a box in it.
VALID_SHARE_MIN: Final = 0.9


def corners_of(kind: str, numbers: FloatArray) -> FloatArray:
    """The corners of the numbers written as `kind` (a y-first kind: its columns swapped first)."""
    if kind in Y_FIRST:
        return corners(Y_FIRST[kind], numbers[:, [1, 0, 3, 2]])
    return corners(kind, numbers)  # type: ignore[arg-type]  # one of BOX_KINDS


def _read_as(kind: str) -> Transform:
    def transform(parsed: Parsed) -> tuple[ParsedRows, list[str]]:
        rows = parsed.rows
        base = Y_FIRST.get(kind, kind)
        # the rows now hold corners as an x-first reader of `base` made them: a later reading of
        # the box (or of the frame) starts from there
        return replace(
            rows, xyxy=corners_of(kind, written_numbers(rows)), convention=base
        ), parsed.class_names

    return transform


def reading(value: str, side: str = "pred") -> Reading:
    """`{SIDE}_BOX`'s reading: `value` is one of KINDS (ValueError names them)."""
    kind = " ".join(value.replace(",", " ").split())
    if kind not in KINDS:
        raise ValueError(f"{value!r} is not a box convention: expected one of {' | '.join(KINDS)}")
    words = WORDS.get(kind) or SWAPPED_WORDS[kind]
    return Reading(
        "box", side_key(side, OPTION), kind, f"boxes written as {words}", _read_as(kind), side=side
    )


def valid_share(rows: ParsedRows, kind: str) -> float:
    xyxy = corners_of(kind, written_numbers(rows))
    with np.errstate(invalid="ignore"):
        valid = (xyxy[:, 2] > xyxy[:, 0]) & (xyxy[:, 3] > xyxy[:, 1])
    return float(np.mean(valid)) if len(valid) else 0.0


def candidates(rows: ParsedRows, side: str, share: float = VALID_SHARE_MIN) -> list[Reading]:
    """Every other convention in which nearly every sampled row (`share` of them) still makes a box."""
    others = [kind for kind in KINDS if kind != rows.convention]
    return [reading(kind, side) for kind in others if valid_share(rows, kind) >= share]
