"""The confidence's range: scores written on another scale than 0-1 (a percentage, a byte).

A tool that writes confidences as a percentage (0-100) or as a byte (0-255) gives rows that the
builder skips as "confidence out of range". The range the written scores span says which scale
they were written on: the smallest usual full scale that holds them all. The reading divides them
by it; `{SIDE}_SCORE` "scale 100" applies it.
"""

from __future__ import annotations

from typing import Final

import numpy as np
from msgspec.structs import replace

from handler.boxes import Parsed, ParsedRows
from handler.readings.reading import Reading, Transform, finite_number, side_key

OPTION: Final = "SCORE"
SCALE: Final = "scale"
# The full scales a score is written on besides 1: a percentage, a byte, a per-mille, 16 bits.
FULL_SCALES: Final = (100.0, 255.0, 1000.0, 65535.0)
# A scale is read from the data only when this share of the written scores are above 1 (a few
# stray values are the model's own, not another scale).
ABOVE_ONE_SHARE_MIN: Final = 0.5


def _divided(full_scale: float) -> Transform:
    def transform(parsed: Parsed) -> tuple[ParsedRows, list[str]]:
        rows = parsed.rows
        if rows.confidence is None:
            return rows, parsed.class_names
        return replace(rows, confidence=rows.confidence / full_scale), parsed.class_names

    return transform


def reading(value: str, side: str = "pred") -> Reading:
    """`{SIDE}_SCORE`'s reading: `scale N`, the full scale the confidences were written on."""
    words = value.lower().split()
    number = finite_number(words[1]) if len(words) == 2 and words[0] == SCALE else None
    if number is None or number <= 0:
        raise ValueError(
            f"{value!r} is not a score scale: expected `scale N`, the value a full confidence is "
            "written as (e.g. `scale 100` for percentages, `scale 255`)"
        )
    text = f"{number:g}"
    says = f"confidences written on a 0-{text} scale"
    return Reading("score", side_key(side, OPTION), f"{SCALE} {text}", says, _divided(number), side=side)


def candidate(rows: ParsedRows, side: str = "pred") -> Reading | None:
    """The scale most written scores say they were written on, when it is not 0-1: the smallest
    usual full scale holding every finite non-negative score."""
    if rows.confidence is None:
        return None
    written = rows.confidence if rows.has_confidence is None else rows.confidence[rows.has_confidence]
    finite = written[np.isfinite(written)]
    if not len(finite) or np.count_nonzero(finite > 1.0) < ABOVE_ONE_SHARE_MIN * len(finite):
        return None
    if finite.min() < 0:
        return None
    top = float(finite.max())
    full = next((scale for scale in FULL_SCALES if top <= scale), None)
    return None if full is None else reading(f"{SCALE} {full:g}", side)
