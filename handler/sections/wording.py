"""The findings' few words for figures: durations, counts with their noun, the score's one format.

The verdict, the warnings, compare's summary and the pages all say a figure the same way.
"""

from __future__ import annotations


def duration(seconds: float) -> str:
    """Labeler time for people: `45 s`, `12 min`, `3 h 05 min`."""
    sign, seconds = ("-" if seconds < 0 else ""), abs(seconds)
    if seconds < 90:
        return f"{sign}{seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"{sign}{minutes} min"
    return f"{sign}{minutes // 60} h {minutes % 60:02d} min"


def image_duration(seconds: float) -> str:
    """One image's labeler time, to the second (the review queue's rows differ by seconds), in
    one format from a minute on: `45 s`, `1 min 23 s`, `11 min 30 s`."""
    whole = round(seconds)
    return f"{whole} s" if whole < 60 else f"{whole // 60} min {whole % 60:02d} s"


def saving(seconds: float) -> str:
    """A time saved that may be a loss, in words: `12 min saved`, `3 min lost`."""
    return f"{duration(abs(seconds))} {'lost' if seconds < 0 else 'saved'}"


def counted(count: int, singular: str, plural: str) -> str:
    """`1 class`, `2 classes`."""
    return f"{count} {singular if count == 1 else plural}"


def score_text(score: float) -> str:
    """The score's one format on every page: `0.56`."""
    return f"{score:.2f}"
