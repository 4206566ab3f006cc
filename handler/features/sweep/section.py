"""`confidence_sweep`: the assistance score and time saved at every threshold of the grid."""

from __future__ import annotations

from typing import Annotated, Any, Protocol

from pydantic import Field

from handler.engine.analyses.confidence_sweep import CONFIDENCE_SWEEP
from handler.engine.counts import OutcomeCounts
from handler.engine.sweep import SWEEP_GRID, SweepPoint
from handler.engine.timecost import TimeCosts
from handler.features.recommendation.section import Recommendation
from handler.features.time.section import TimeSaved
from handler.sections import charts
from handler.sections.context import RunFacts
from handler.sections.fields import Count, Counts, Parameters, Score, Section, Threshold
from handler.sections.shown import Shown


class SweepPointFigures(Section):
    threshold: Threshold
    assistance_score: Score
    predictions_kept: Count
    counts: Counts
    saved_seconds: float = Field(
        description="Labeler seconds saved against drawing every GT box (negative: lost), at this threshold."
    )


def sweep_grid_text() -> str:
    """`from 0 to 0.95 in steps of 0.05`, from the engine's grid."""
    step = round(SWEEP_GRID[1] - SWEEP_GRID[0], 10)
    return f"from {SWEEP_GRID[0]:g} to {SWEEP_GRID[-1]:g} in steps of {step:g}"


class ConfidenceSweep(Section):
    __doc__ = f"The assistance score at confidence thresholds {sweep_grid_text()}, and at the one given."

    points: tuple[SweepPointFigures, ...] = Field(
        min_length=1,
        description="The grid's thresholds, and the one given (parameters) when it is off the grid.",
    )


def _point(point: SweepPoint, costs: TimeCosts) -> SweepPointFigures:
    return SweepPointFigures(
        threshold=point.threshold,
        assistance_score=point.tally.assistance_score,
        predictions_kept=point.predictions_kept,
        counts=Counts.of(point.tally),
        saved_seconds=float(OutcomeCounts(point.tally.counts).seconds_saved(costs)),
    )


def confidence_sweep(facts: RunFacts) -> ConfidenceSweep:
    sweep = facts.state.of(CONFIDENCE_SWEEP).sweep
    return ConfidenceSweep(points=tuple(_point(point, facts.costs) for point in sweep.points))


# The values of the sweep's fragment (fragment.html.j2 beside this module).
class _Drawn(Protocol):
    """What the sweep's figure reads of the findings."""

    @property
    def confidence_sweep(self) -> ConfidenceSweep: ...
    @property
    def time(self) -> TimeSaved: ...
    @property
    def parameters(self) -> Parameters: ...
    @property
    def recommendation(self) -> Recommendation: ...


def sweep_figure(findings: _Drawn) -> dict[str, Any]:
    sweep, scratch = findings.confidence_sweep, findings.time.from_scratch_seconds
    points = [
        (p.threshold, p.assistance_score, p.saved_seconds / scratch if scratch else 0.0) for p in sweep.points
    ]
    return {
        "sweep_fig": charts.sweep_figure(
            points, findings.parameters.confidence_threshold, findings.recommendation.threshold
        ),
        "sweep_grid": sweep_grid_text(),
        "sweep_grid_values": SWEEP_GRID,
    }


ConfidenceSweepSection = Annotated[ConfidenceSweep, Shown(confidence_sweep, "sweep", draw=sweep_figure)]
