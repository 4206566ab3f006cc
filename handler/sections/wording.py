"""The product's one home for saying a figure: durations, counts with their noun, the score,
intervals, differences and file names; and for the words of what a run scored (`ShapeWords`:
boxes or masks, and what the labeler does to each).

The verdict, the warnings, the errors, compare's summary and the pages all say a figure through
these, so a plural, an interval whose ends are equal or a negative difference reads the same
everywhere (tests/report/test_wording.py walks each through 0, 1, many, equal ends and signs).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import Final

import msgspec
from msgspec import field

from handler.engine.timecost import Shape

# A signed number uses the minus sign (U+2212), never a hyphen that reads as a dash: "B - A -0.15".
MINUS = "\u2212"


def duration(seconds: float) -> str:
    """Labeler time for people: `45 s`, `12 min`, `3 h 05 min`."""
    sign, seconds = (MINUS if round(seconds) < 0 else ""), abs(seconds)
    if seconds < 90:
        return f"{sign}{seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"{sign}{minutes} min"
    return f"{sign}{minutes // 60} h {minutes % 60:02d} min"


def as_said(seconds: float) -> float:
    """The seconds `duration` stands for (`2 h 18 min` is 8280 s): a difference of two said
    durations is computed on these, so it agrees with them (4 h 34 min - 2 h 18 min = 2 h 16 min)."""
    return float(round(seconds)) if abs(seconds) < 90 else float(round(seconds / 60) * 60)


def image_duration(seconds: float) -> str:
    """One image's labeler time, to the second (the review queue's rows differ by seconds), in
    one format from a minute on: `45 s`, `1 min 23 s`, `11 min 30 s`."""
    whole = round(seconds)
    return f"{whole} s" if whole < 60 else f"{whole // 60} min {whole % 60:02d} s"


def saved_time(seconds: float) -> str:
    """A time saved after "save" or "saves": `47 min`, `12 min lost`, `no time` (never `0 s`,
    never a negative duration)."""
    if round(seconds) == 0:
        return "no time"
    return duration(seconds) if seconds > 0 else f"{duration(-seconds)} lost"


def saving(seconds: float) -> str:
    """A time saved that may be a loss, standing alone: `12 min saved`, `3 min lost`, `no time saved`."""
    if round(seconds) == 0:
        return "no time saved"
    return f"{duration(abs(seconds))} {'lost' if seconds < 0 else 'saved'}"


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """`0 images`, `1 image`, `2 images`; `plural` when the noun does not just take an s
    (`1 class`, `2 classes`)."""
    return f"{count} {singular if count == 1 else (plural or singular + 's')}"


def score_text(score: float) -> str:
    """The score's one format on every page: `0.56`."""
    return f"{score:.2f}"


def signed(value: float, decimals: int = 2) -> str:
    """A difference with its sign: `+0.15`, MINUS then `0.15`, `0.00` (no sign on a zero)."""
    text = f"{abs(value):.{decimals}f}"
    if float(text) == 0:
        return text
    return ("+" if value > 0 else MINUS) + text


def how_often(level: float) -> str:
    """An interval's level as a lead says it: 0.95 `19 times in 20`, 0.99 `99 times in 100`."""
    odds = Fraction(level).limit_denominator(100)
    return f"{odds.numerator} times in {odds.denominator}"


def between(low: float, high: float, say: Callable[[float], str], level: float = 0.95) -> str:
    """An interval in words: `between 1 h 51 min and 2 h 48 min, 19 times in 20`; when both ends
    say the same, `5 min, 19 times in 20`."""
    low_text, high_text = say(low), say(high)
    if low_text == high_text:
        return f"{low_text}, {how_often(level)}"
    return f"between {low_text} and {high_text}, {how_often(level)}"


def ends(low: float, high: float, say: Callable[[float], str]) -> str:
    """An interval in a table cell: `-0.18 to +0.01` (minus signs), or the one value when both ends say it."""
    low_text, high_text = say(low), say(high)
    return low_text if low_text == high_text else f"{low_text} to {high_text}"


def give_or_take(
    value: float, low: float, high: float, say: Callable[[float], str], level: float = 0.95
) -> str:
    """What follows a figure: ` (between 38 min and 56 min, 19 times in 20)`, or nothing when the
    interval's ends say the figure itself (`save 5 min`, never `5 min (5 min to 5 min)`)."""
    if say(low) == say(high) == say(value):
        return ""
    return f" ({between(low, high, say, level)})"


def change(value: float, say: Callable[[float], str], more: str, less: str) -> str:
    """A difference in words: `0.09 lower`, `25 min more`; `no different` when it says zero."""
    text = say(abs(value))
    if text == say(0.0):
        return "no different"
    return f"{text} {more if value > 0 else less}"


def tail_of(name: str, limit: int = 20) -> str:
    """A long asset id for a narrow caption, cut at its separators from the front, where ids of
    one dataset agree (`COCO_val2014_000000000164.jpg` -> `…000000000164.jpg`), never mid-part
    unless one part alone is longer than `limit`."""
    if len(name) <= limit:
        return name
    parts = re.split(r"(?<=[_\-./: ])", name)
    while len(parts) > 1 and len("".join(parts)) + 1 > limit:
        parts.pop(0)
    kept = "".join(parts)
    return "…" + (kept if len(kept) < limit else kept[-(limit - 1) :])


def short_name(source: str) -> str:
    """A dataset's name as a lead calls it: the file or folder's own name, with a trailing `/`
    for a folder path written with one (`results.json`, `s3://bucket/labels/` -> `labels/`)."""
    folder = source.endswith("/")
    name = PurePosixPath(source.rstrip("/").replace("\\", "/")).name or source
    return name + "/" if folder else name


class ShapeWords(msgspec.Struct, frozen=True):
    """What a run's objects are called, one and many, and each labeler action as said for them:
    a mask's shifted pre-label is not nudged, its outline is fixed. The keys (`nudge`) stay the
    findings' and the ledger's; only the words change."""

    one: str
    many: str
    said: Mapping[str, str] = field(default_factory=dict)

    def count(self, count: int, qualifier: str = "") -> str:
        """`3 masks`, `1 ground-truth box` (`qualifier`: a word before the noun)."""
        before = f"{qualifier} " if qualifier else ""
        return counted(count, before + self.one, before + self.many)

    def action(self, key: str) -> str:
        """An action key as the labeler does it: `nudge`, or `fix the outline` for a mask."""
        return self.said.get(key, key)

    @property
    def every(self) -> str:
        """`every box` or `every mask`: what drawing from scratch draws."""
        return f"every {self.one}"


SHAPE_WORDS: Final[Mapping[str, ShapeWords]] = MappingProxyType(
    {
        "boxes": ShapeWords("box", "boxes"),
        "masks": ShapeWords("mask", "masks", MappingProxyType({"nudge": "fix the outline"})),
    }
)


def shape_words(shape: Shape) -> ShapeWords:
    """The words of a run scored on `shape`."""
    return SHAPE_WORDS[shape]
