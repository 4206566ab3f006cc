"""`uncertainty` and the verdict's borderline clause, from the run's per-image bootstrap."""

from __future__ import annotations

from typing import Annotated, cast

from pydantic import Field

from handler.engine.bootstrap import SEED, Bootstrap
from handler.engine.score import GRADES
from handler.report.findings.context import RunFacts
from handler.report.findings.fields import Grade, Score, Section
from handler.report.findings.sections import SectionSpec


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
    borderline: bool = Field(description="The interval crosses a grade bound.")
    images_for_margin: int = Field(
        ge=1,
        description="About how many images would narrow the score interval to +-0.02: images x "
        "(half-width / 0.02)^2, since a bootstrap interval shrinks as 1/sqrt(images).",
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
        borderline=found.borderline,
        images_for_margin=found.images_for_margin,
    )


def borderline_clause(found: Bootstrap, grade: str) -> str:
    """`, borderline with Strong assist` when the interval crosses a grade bound."""
    if not found.borderline:
        return ""
    others = [name for name, _ in found.likely_grades() if name != grade]
    return f", borderline with {' and '.join(others)}" if others else ""


UncertaintySection = Annotated[
    Uncertainty | None,
    Field(description="Null when nothing was scored."),
    SectionSpec(uncertainty),
]
