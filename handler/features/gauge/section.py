"""The gauge: the assistance score on its grade bands, with `uncertainty` (the run's per-image
bootstrap) as an arc and a sentence; and the verdict's borderline clause."""

from __future__ import annotations

import math
from typing import Annotated, Any, Final, Protocol, cast

from pydantic import Field

from handler.engine.bootstrap import SEED, Bootstrap
from handler.engine.score import GRADES
from handler.sections.context import RunFacts
from handler.sections.fields import Grade, Score, Section
from handler.sections.shown import Shown

BAND_COLORS: Final = ("#c53030", "#dd6b20", "#b7791f", "#1a7f4b")  # Minimal → Production
CENTER, RADIUS = (110.0, 110.0), 90.0
SCORE_BELOW: Final = 32.0  # the score's baseline, this far below the gauge's centre


class GradeShare(Section):
    grade: Grade
    share: Score


class Interval(Section):
    low: float
    high: float


class Uncertainty(Section):
    """Per-image bootstrap: images drawn with replacement, seeded, so the same data gives the same figures."""

    level: float = Field(gt=0, lt=1)
    resamples: int = Field(ge=1000)
    seed: int
    score_low: Score
    score_high: Score
    grade_probabilities: tuple[GradeShare, ...] = Field(
        description="Every grade with the share of resamples that reach it, best first; shares sum to 1."
    )
    saved_seconds: Interval = Field(
        description="The same interval for time.saved_seconds; with fitted costs (time.costs_source), each "
        "resample is also priced at one bootstrap replicate of the fitted seconds, so it carries both."
    )
    saved_seconds_images_only: Interval | None = Field(
        description="With fitted costs: the interval at the fitted seconds, held fixed (images only)."
    )


def uncertainty(facts: RunFacts) -> Uncertainty | None:
    found = facts.spread
    if found is None:
        return None
    shares = zip((name for name, _, _ in GRADES), found.grade_shares, strict=True)
    return Uncertainty(
        level=float(found.level),
        resamples=found.resamples,
        seed=SEED,
        score_low=found.score[0],
        score_high=found.score[1],
        grade_probabilities=tuple(GradeShare(grade=cast(Grade, name), share=share) for name, share in shares),
        saved_seconds=Interval(low=found.seconds_saved[0], high=found.seconds_saved[1]),
        saved_seconds_images_only=None
        if found.seconds_saved_images_only is None
        else Interval(low=found.seconds_saved_images_only[0], high=found.seconds_saved_images_only[1]),
    )


def borderline_clause(found: Bootstrap, grade: str) -> str:
    """`, borderline with Strong assist` when the interval crosses a grade bound."""
    if not found.borderline:
        return ""
    others = [name for name, _ in found.likely_grades() if name != grade]
    return f", borderline with {' and '.join(others)}" if others else ""


def _point(score: float, radius: float = RADIUS) -> tuple[float, float]:
    """The point of the half-circle gauge for a score in [0, 1] (0 left, 1 right)."""
    angle = math.pi * (1 - score)
    return CENTER[0] + radius * math.cos(angle), CENTER[1] - radius * math.sin(angle)


def _arc(start: float, end: float, radius: float = RADIUS) -> str:
    (x0, y0), (x1, y1) = _point(start, radius), _point(end, radius)
    return f"M {x0:.2f} {y0:.2f} A {radius} {radius} 0 0 1 {x1:.2f} {y1:.2f}"


def _tick(bound: float) -> dict[str, Any]:
    """A grade bound marked across the band, with its value just outside the arc."""
    (x0, y0), (x1, y1) = _point(bound, RADIUS - 11), _point(bound, RADIUS + 11)
    x, y = _point(bound, RADIUS + 20)
    return {
        "path": f"M {x0:.2f} {y0:.2f} L {x1:.2f} {y1:.2f}",
        "x": f"{x:.2f}",
        "y": f"{y + 4:.2f}",
        "label": f"{bound:g}",
    }


def _listed(words: list[str]) -> str:
    """`a, b and c`."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def gauge(score: float, interval: tuple[float, float] | None = None) -> dict[str, Any]:
    """The half-circle gauge: grade bands, their bounds, the needle, and the score's interval as a
    dark arc just inside the bands (the same scale, so it is said once)."""
    bounds = sorted(numerator / denominator for _, numerator, denominator in GRADES)
    edges = [*bounds, 1.0]
    bands = [{"path": _arc(edges[i], edges[i + 1]), "color": BAND_COLORS[i]} for i in range(len(bounds))]
    x, y = _point(score, RADIUS - 24)
    ticks = [_tick(bound) for bound in bounds if bound > 0]
    return {
        "bands": bands,
        "ticks": ticks,
        "bounds": _listed([tick["label"] for tick in ticks]),
        "center": tuple(f"{v:g}" for v in CENTER),
        "score_at": (f"{CENTER[0]:g}", f"{CENTER[1] + SCORE_BELOW:g}"),
        "needle": f"M {CENTER[0]} {CENTER[1]} L {x:.2f} {y:.2f}",
        "interval": None if interval is None else _arc(*interval, radius=RADIUS - 12),
    }


class _Drawn(Protocol):
    """What the gauge reads of the findings."""

    @property
    def uncertainty(self) -> Uncertainty | None: ...
    @property
    def assistance_score(self) -> float: ...


def gauge_values(findings: _Drawn) -> dict[str, Any]:
    """The gauge's geometry and the grade bounds it names."""
    u = findings.uncertainty
    interval = None if u is None else (u.score_low, u.score_high)
    return {
        "gauge": gauge(findings.assistance_score, interval),
        "grade_bounds": " / ".join(f"{n / d:g}" for _, n, d in reversed(GRADES[:-1])),
    }


UncertaintySection = Annotated[
    Uncertainty | None,
    Field(description="Null when nothing was scored."),
    Shown(uncertainty, "gauge", draw=gauge_values, always=True),
]
