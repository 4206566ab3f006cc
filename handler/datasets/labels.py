"""What the text label formats share: one line per box parsed into columns, and class spaces.

A format gives a line parser (tokens → a box, or why the line is not one); `parse_lines`
turns a file's text into `TextLabels` columns, with no file access, so that each format's
parser is tested on strings.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import msgspec
import numpy as np

from handler.boxes import BoolArray, FloatArray, IntArray
from handler.errors import quoted

Box = tuple[float, float, float, float]


class Row(msgspec.Struct, frozen=True):
    """One box as a line wrote it: the class as written (an id or a name), xyxy in the file's frame."""

    class_token: str
    xyxy: Box
    confidence: float | None = None  # None: the line wrote none
    difficult: bool = False
    corners: tuple[float, ...] | None = None  # x1 y1 … x4 y4 of a rotated box (then `xyxy` is NaN)


LineParser = Callable[[list[str]], Row | str]


class TextLabels(msgspec.Struct, frozen=True):
    """The boxes of one label file as parallel columns, before class names are resolved.

    `confidence` is NaN where a line wrote none or not a number (`has_confidence`: the lines
    that wrote one); `line` is each box's 1-based line number;
    `rejected` lists the lines that are not a box, as (line number, why), for the skip log.
    """

    xyxy: FloatArray
    class_token: list[str]
    confidence: FloatArray
    has_confidence: BoolArray
    difficult: BoolArray
    line: IntArray
    rejected: list[tuple[int, str]]
    corners: FloatArray | None = None  # (N, 8) of a format writing corners; None: boxes are `xyxy`
    # A format writing polygons (YOLO-seg): row k's points are the next `polygon_points[k]` of
    # `polygon_xy` (M, 2), in the file's frame; None: no polygons.
    polygon_xy: FloatArray | None = None
    polygon_points: IntArray | None = None

    def __len__(self) -> int:
        return len(self.class_token)


def number(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def numbers(tokens: list[str]) -> list[float] | str:
    """The tokens as floats, or why one is not a number."""
    values = [number(t) for t in tokens]
    bad = next((t for t, v in zip(tokens, values, strict=True) if v is None), None)
    return f"{quoted(bad)} is not a number" if bad is not None else [v for v in values if v is not None]


def first_tokens(text: str) -> list[str] | None:
    """The tokens of the first non-blank line: what decides whether a .txt is a label file."""
    return next((tokens for line in text.splitlines() if (tokens := line.split())), None)


def parse_lines(text: str, parse_line: LineParser) -> TextLabels:
    rows: list[Row] = []
    lines: list[int] = []
    rejected: list[tuple[int, str]] = []
    for line_number, line in enumerate(text.splitlines(), start=1):
        tokens = line.split()
        if not tokens:
            continue
        parsed = parse_line(tokens)
        if isinstance(parsed, str):
            rejected.append((line_number, parsed))
        else:
            rows.append(parsed)
            lines.append(line_number)
    xyxy = np.array([r.xyxy for r in rows], dtype=np.float64).reshape(len(rows), 4)
    confidence = np.array(
        [math.nan if r.confidence is None else r.confidence for r in rows], dtype=np.float64
    )
    # Numbers that make no box (NaN, x_max < x_min) are rows too: the builder's rules skip them.
    return TextLabels(
        xyxy=xyxy,
        class_token=[r.class_token for r in rows],
        confidence=confidence,
        has_confidence=np.array([r.confidence is not None for r in rows], dtype=bool),
        difficult=np.array([r.difficult for r in rows], dtype=bool),
        line=np.array(lines, dtype=np.int64),
        rejected=rejected,
        corners=_corners(rows),
    )


def _corners(rows: list[Row]) -> FloatArray | None:
    """(N, 8) the corners of the rows that wrote them, NaN for the others; None when none did."""
    if all(r.corners is None for r in rows):
        return None
    nothing = (math.nan,) * 8
    return np.array([nothing if r.corners is None else r.corners for r in rows], dtype=np.float64).reshape(
        -1, 8
    )


def is_whole(value: float) -> bool:
    return math.isfinite(value) and value.is_integer() and value >= 0


class ClassSpace:
    """The classes of a text dataset: ids from a names file, and names as the lines write them.

    With `ids_only` (YOLO) every class is an id that the names file must name; otherwise a
    whole-number token is an id when there is a names file, and any other token is a name,
    appended in order of first appearance.
    """

    def __init__(self, names_by_id: dict[int, str] | None, names_source: str, ids_only: bool) -> None:
        self.names_source = names_source
        self.ids_only = ids_only
        ids = sorted(names_by_id or {})
        self.names: list[str] = []
        self._by_name: dict[str, int] = {}
        self._by_id = {class_id: self._add((names_by_id or {})[class_id]) for class_id in ids}
        # A declared list that a probability vector can index: ids 0..n-1 and distinct names.
        dense = ids == list(range(len(ids))) and len(self.names) == len(ids)
        self.declared_order = list(self.names) if dense and ids else None

    def _add(self, name: str) -> int:
        if name not in self._by_name:
            self._by_name[name] = len(self.names)
            self.names.append(name)
        return self._by_name[name]

    def index(self, token: str) -> int | None:
        """The class index of a written class, or None for an id that has no name."""
        if token.isdigit() and (self.ids_only or self._by_id):
            return self._by_id.get(int(token))
        return None if self.ids_only else self._add(token)

    def missing(self, token: str) -> str:
        """Why `token` has no class, in words."""
        if not self._by_id:
            return f"class id {token} has no name: expected {self.names_source}"
        return f"class id {token} has no name in {self.names_source} ({len(self._by_id)} names)"
