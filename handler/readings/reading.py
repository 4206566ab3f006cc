"""Another reading of a side's parsed rows: what it is, and the pieces readings are made from.

A reading re-interprets the rows a reader parsed (the four numbers of a box and their axis order,
the frame they are in, the class ids) without reading the file again: pure numpy over
`ParsedRows`, so the engine can score it exactly as it scored the rows as read, and an option
applies the same function. Readings of one side compose (box, then frame, then classes).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final

import msgspec
import numpy as np
from msgspec.structs import replace

from handler.boxes import FloatArray, IntArray, Parsed, ParsedRows

Transform = Callable[[Parsed], tuple[ParsedRows, list[str]]]
# Rows looked at to generate candidates: enough for a share or a quantile, cheap at any size.
SAMPLE_ROWS: Final = 20_000
SIDES: Final = ("gt", "pred")


def finite_number(text: str) -> float | None:
    """The number `text` writes, None when it writes none or an infinite one (an option's value)."""
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def side_key(side: str, option: str) -> str:
    """The inputs-file key of a side's read option: `PRED_BOX`, `GT_FRAME`."""
    return f"{side.upper()}_{option}"


class Reading(msgspec.Struct, frozen=True):
    """One way to read a side's rows: `key` is the read option that applies it, with `value`."""

    family: str  # box, frame, classes
    key: str  # PRED_BOX, PRED_FRAME, PRED_CLASS_MAP, GT_BOX, ...
    value: str  # the option's value ("x1 y1 x2 y2", "letterbox 640", a class map file's name)
    says: str  # what it means, in words ("boxes written as [x1, y1, x2, y2]")
    transform: Transform
    class_map: tuple[tuple[str, str], ...] = ()  # (class as written, GT class): a class reading's file
    side: str = "pred"
    # The images (asset ids) or classes (as written) it reads, when only part of the rows (`groups`):
    # no read option applies it, the step that wrote them is to fix. Empty: every row.
    only: tuple[str, ...] = ()
    part: str = ""  # the group in words: "on 21 of 100 images (a.jpg, b.jpg, c.jpg, …)"


class Combined(msgspec.Struct, frozen=True):
    """The readings a candidate applies, each side's in the order they compose (box, frame, classes)."""

    parts: tuple[Reading, ...]

    def of(self, side: str) -> tuple[Reading, ...]:
        return tuple(part for part in self.parts if part.side == side)

    @property
    def says(self) -> str:
        by_side = [
            f"{'the ground truth' if side == 'gt' else 'the predictions'} {self.says_of(side)}"
            for side in SIDES
            if self.of(side)
        ]
        return "; ".join(by_side)

    def says_of(self, side: str) -> str:
        """What it reads of `side`, in words: the group it reads (if part of the rows), then how."""
        parts = self.of(side)
        group = "".join(f"{part.part} " for part in parts if part.part)
        return f"{group}with {' and '.join(part.says for part in parts)}"

    @property
    def class_map(self) -> tuple[tuple[str, str], ...]:
        return next((part.class_map for part in self.parts if part.class_map), ())

    @property
    def key(self) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
        """What tells two candidates apart: each part's option, value and group."""
        return tuple((part.key, part.value, part.only) for part in self.parts)

    @property
    def partial(self) -> bool:
        """It reads only part of the rows (no option applies it)."""
        return any(part.only for part in self.parts)

    @property
    def families(self) -> tuple[str, ...]:
        return tuple(part.family for part in self.parts)

    def plus(self, other: Reading) -> Combined:
        return Combined((*self.parts, other))


def apply(readings: tuple[Reading, ...], parsed: Parsed) -> tuple[ParsedRows, list[str]]:
    """The rows read with each reading in turn."""
    rows, names = parsed.rows, parsed.class_names
    for reading in readings:
        rows, names = reading.transform(replace(parsed, rows=rows, class_names=names))
    return rows, names


def sample(rows: ParsedRows) -> ParsedRows:
    """Up to SAMPLE_ROWS rows, evenly spread (not a random draw: the same every run)."""
    if len(rows) <= SAMPLE_ROWS:
        return rows
    keep = np.zeros(len(rows), dtype=bool)
    keep[np.linspace(0, len(rows) - 1, SAMPLE_ROWS).astype(np.int64)] = True
    return rows.subset(keep)


def written_numbers(rows: ParsedRows) -> FloatArray:
    """The four numbers each row wrote, undoing the convention its reader turned into corners."""
    x0, y0, x1, y1 = rows.xyxy.T
    with np.errstate(invalid="ignore", over="ignore"):
        if rows.convention == "x y w h":
            return np.stack((x0, y0, x1 - x0, y1 - y0), axis=1)
        if rows.convention == "cx cy w h":
            return np.stack(((x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0), axis=1)
    return rows.xyxy


def pixel_frame(rows: ParsedRows) -> bool:
    """The rows were read as pixels (no row flagged normalised)."""
    return rows.normalized is None or not bool(rows.normalized.any())


def matched_matrix(gt_class: IntArray, pred_class: IntArray, n_classes: int) -> IntArray:
    """(n, n) class-agnostic matched pairs by (GT class, predicted class)."""
    matrix = np.zeros((n_classes, n_classes), dtype=np.int64)
    np.add.at(matrix, (gt_class, pred_class), 1)
    return matrix
