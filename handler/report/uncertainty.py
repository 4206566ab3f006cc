"""The `uncertainty` section and the verdict's borderline clause, from a per-image bootstrap."""

from __future__ import annotations

from typing import cast

from handler.engine.bootstrap import SEED, Bootstrap
from handler.engine.score import GRADES
from handler.report.model import Grade, GradeShare, Interval, Uncertainty


def uncertainty(found: Bootstrap) -> Uncertainty:
    shares = zip((name for name, _, _ in GRADES), found.grade_shares, strict=True)
    return Uncertainty(
        level=float(found.level),
        resamples=found.resamples,
        seed=SEED,
        score_low=found.score[0],
        score_high=found.score[1],
        grade_probabilities=tuple(GradeShare(grade=cast(Grade, name), share=share) for name, share in shares),
        saved_seconds=Interval(low=found.seconds_saved[0], high=found.seconds_saved[1]),
        borderline=found.borderline,
        images_for_margin=found.images_for_margin,
    )


def borderline_clause(found: Bootstrap) -> str:
    """` Borderline: 61% Strong assist, 39% Partial assist (...)` when the interval crosses a bound."""
    if not found.borderline:
        return ""
    grades = ", ".join(f"{share:.0%} {name}" for name, share in found.likely_grades())
    return f" Borderline: {grades} (share of {found.resamples} bootstrap resamples of the images)."
