"""Column layouts of text label lines: which one a file is read in, and which ones fit.

A layout is the order of a line's columns after the class: an optional score first or last and
a box as `cx cy w h` (centre and size), `x y w h` (corner and size) or `x1 y1 x2 y2` (corners),
normalised to 0-1 or in pixels. YOLO reads `class cx cy w h [score]` normalised, Cartucho
`class [score] x1 y1 x2 y2` in pixels; exports in another layout are read wrong without an error,
so a sample of the lines is checked against every known layout (`check_layout`).
"""

from __future__ import annotations

from typing import Final, Literal

import msgspec
import numpy as np
from msgspec.structs import replace

from handler.boxes import BOX_KINDS as BOX_KINDS
from handler.boxes import BoolArray, BoxKind, FloatArray, corners
from handler.datasets.labels import Row, number

SCORE: Final = "score"
CLASS: Final = "class"
FRAMES: Final = {"normalized": True, "normalised": True, "pixels": False}
# A normalised box may overshoot the image by rounding; a pixel box by a pixel.
NORMALIZED_SLACK: Final = 0.01
PIXEL_SLACK: Final = 1.0
# Lines checked: enough to tell layouts apart, few enough to cost nothing next to the reading.
SAMPLE_LINES: Final = 2000
# A layout fits when this share of the sampled lines make a box in it; the layout read is
# suspect below READ_FIT_MIN (a few odd lines are data, most are a wrong layout).
FIT_MIN: Final = 0.95
READ_FIT_MIN: Final = 0.9


class Layout(msgspec.Struct, frozen=True):
    """`class` then `box` with an optional score before or after it; `normalized` None: detected."""

    box: BoxKind
    score: Literal["first", "last", "none"] = "none"
    normalized: bool | None = None

    @property
    def columns(self) -> int:
        """Numbers after the class."""
        return 4 if self.score == "none" else 5

    def name(self, frame: bool = False) -> str:
        parts = [CLASS, *([SCORE] if self.score == "first" else []), self.box]
        parts += [SCORE] if self.score == "last" else []
        if frame and self.normalized is not None:
            parts.append("(normalised)" if self.normalized else "(pixels)")
        return " ".join(parts)

    def split(self, values: FloatArray) -> tuple[FloatArray, FloatArray | None]:
        """(n, columns) numbers → (n, 4) xyxy and the scores (None without a score column)."""
        start = 1 if self.score == "first" else 0
        box = values[:, start : start + 4]
        score = None if self.score == "none" else values[:, 0 if self.score == "first" else 4]
        return corners(self.box, box), score


# The layouts looked for, by the count of numbers after the class.
KNOWN: Final = tuple(Layout(box, score) for score in ("none", "first", "last") for box in BOX_KINDS)


def parse_layout(text: str) -> Layout:
    """A layout as a user writes it: `class score cx cy w h`, optionally ending in `normalized`
    or `pixels` (else the frame is detected); ValueError says what was expected."""
    words = text.replace(",", " ").split()
    normalized = FRAMES.get(words[-1].lower()) if words else None
    words = words[:-1] if normalized is not None else words
    box_words = [w for w in words[1:] if w != SCORE]
    box = " ".join(box_words)
    score_at = [i for i, w in enumerate(words[1:]) if w == SCORE]
    score: Literal["first", "last", "none"] = "none"
    if score_at == [0] and len(words) > 1:
        score = "first"
    elif score_at == [len(words) - 2]:
        score = "last"
    valid = bool(words) and words[0] == CLASS and box in BOX_KINDS and len(score_at) <= 1
    if not valid or (score_at and score == "none"):
        kinds = " | ".join(BOX_KINDS)
        raise ValueError(
            f"{text!r} is not a column layout: expected `class [score] <{kinds}> [score]`, "
            "optionally ending in `normalized` or `pixels`"
        )
    return Layout(box, score, normalized)  # type: ignore[arg-type]


def layout_line(layout: Layout, tokens: list[str]) -> Row | str:
    """A label line in `layout`: the class is everything before the numbers (names may hold spaces)."""
    if len(tokens) <= layout.columns:
        return f"expected `{layout.name()}`, got {len(tokens)} values"
    values = [number(token) for token in tokens[-layout.columns :]]
    if any(value is None for value in values):
        return f"expected `{layout.name()}`: the last {layout.columns} values must be numbers"
    xyxy, score = layout.split(np.array([values], dtype=np.float64))
    return Row(
        class_token=" ".join(tokens[: -layout.columns]),
        xyxy=(float(xyxy[0, 0]), float(xyxy[0, 1]), float(xyxy[0, 2]), float(xyxy[0, 3])),
        confidence=None if score is None else float(score[0]),
    )


def sample_values(texts: list[str]) -> FloatArray:
    """The numbers after the class of the first SAMPLE_LINES lines with 4 or 5 of them (the
    commoner count wins): an (n, 4) or (n, 5) array."""
    rows: dict[int, list[list[float]]] = {4: [], 5: []}
    seen = 0
    for text in texts:
        for line in text.splitlines():
            tokens = line.split()
            tokens = tokens[:-1] if tokens and tokens[-1] == "difficult" else tokens
            values = [number(token) for token in tokens[1:]]
            if len(values) in rows and all(value is not None for value in values):
                rows[len(values)].append([v for v in values if v is not None])
                seen += 1
            if seen >= SAMPLE_LINES:
                break
        if seen >= SAMPLE_LINES:
            break
    width = 4 if len(rows[4]) >= len(rows[5]) else 5
    return np.array(rows[width], dtype=np.float64).reshape(-1, width)


def _fitting_rows(layout: Layout, values: FloatArray, normalized: bool) -> BoolArray:
    """Rows that make a box in `layout`: a score in [0, 1], positive size, inside the frame."""
    xyxy, score = layout.split(values)
    with np.errstate(invalid="ignore"):
        ok = (xyxy[:, 2] > xyxy[:, 0]) & (xyxy[:, 3] > xyxy[:, 1])
        if score is not None:
            ok &= (score >= 0) & (score <= 1)
        slack = NORMALIZED_SLACK if normalized else PIXEL_SLACK
        ok &= (xyxy[:, :2] >= -slack).all(axis=1)
        if normalized:
            ok &= (xyxy[:, 2:] <= 1 + slack).all(axis=1)
    fitting: BoolArray = ok & np.isfinite(values).all(axis=1)
    return fitting


def _coordinates_normalized(layout: Layout, values: FloatArray) -> bool:
    """Whether the box columns all lie in 0-1 (the frame a layout without one is read in)."""
    start = 1 if layout.score == "first" else 0
    box = values[:, start : start + 4]
    return bool(box.size) and bool(np.all(np.abs(box) <= 1 + NORMALIZED_SLACK))


class LayoutFit(msgspec.Struct, frozen=True):
    layout: Layout
    share: float  # of the sampled lines, those that make a box in it


class LayoutCheck(msgspec.Struct, frozen=True):
    """How the sampled lines fit the layout read, and the known layouts that fit them."""

    read: LayoutFit
    fitting: tuple[LayoutFit, ...]  # known layouts with share >= FIT_MIN, best first
    lines: int

    @property
    def suspect(self) -> bool:
        return self.lines > 0 and self.read.share < READ_FIT_MIN


def fit(layout: Layout, values: FloatArray) -> LayoutFit:
    """The share of `values` rows that make a box in `layout` (its frame, or the detected one)."""
    detected = _coordinates_normalized(layout, values)
    normalized = detected if layout.normalized is None else layout.normalized
    if layout.columns != values.shape[1] or not len(values) or (normalized and not detected):
        return LayoutFit(Layout(layout.box, layout.score, normalized), 0.0)
    # Numbers in 0-1 read as pixels are a normalised file read in the wrong frame.
    wrong_frame = not normalized and detected
    share = 0.0 if wrong_frame else float(np.mean(_fitting_rows(layout, values, normalized)))
    return LayoutFit(Layout(layout.box, layout.score, normalized), share)


def check_layout(read: Layout, texts: list[str]) -> LayoutCheck:
    """Sample the files' lines, and fit them to the layout read and to every known layout."""
    values = sample_values(texts)
    fits = [fit(layout, values) for layout in KNOWN]
    fitting = sorted((f for f in fits if f.share >= FIT_MIN), key=lambda f: -f.share)
    # A layout read with an optional score (YOLO's, Cartucho's) reads four numbers without it.
    optional = read.score != "none" and values.shape[1] == 4
    read_fit = fit(replace(read, score="none") if optional else read, values)
    return LayoutCheck(read_fit, tuple(fitting), len(values))
