"""`time`: estimated labeler time with the predictions vs drawing every GT box from scratch."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from handler.engine.counts import OutcomeCounts
from handler.engine.outcomes import Tally
from handler.engine.timecost import ASSUMED, DRAW_SOURCE, TimeCosts
from handler.report import charts
from handler.report.findings.context import RunFacts
from handler.report.findings.fields import Seconds, Section
from handler.report.findings.sections import Figure, SectionSpec

if TYPE_CHECKING:
    from handler.report.findings.model import Findings


class ActionCosts(Section):
    """Seconds per labeler action."""

    accept: Seconds
    nudge: Seconds
    relabel: Seconds
    delete: Seconds
    draw: Seconds


class TimeSaved(Section):
    """Estimated labeler time with the predictions vs drawing every GT box from scratch."""

    costs_seconds: ActionCosts
    costs_adjusted: bool = Field(description="The costs differ from the defaults.")
    with_predictions_seconds: Seconds
    from_scratch_seconds: Seconds
    saved_seconds: float = Field(
        description="Negative when correcting the predictions takes longer than drawing."
    )
    saved_share: float = Field(le=1)
    draw_source: str
    assumptions: dict[str, str]


def time_saved(tally: Tally, costs: TimeCosts) -> TimeSaved:
    estimate = OutcomeCounts(tally.counts).time_estimate(costs)
    return TimeSaved(
        costs_seconds=ActionCosts(**costs.to_dict()),
        costs_adjusted=costs != TimeCosts(),
        with_predictions_seconds=estimate.with_predictions,
        from_scratch_seconds=estimate.from_scratch,
        saved_seconds=estimate.saved,
        saved_share=estimate.saved_share,
        draw_source=DRAW_SOURCE,
        assumptions=dict(ASSUMED),
    )


def time(facts: RunFacts) -> TimeSaved:
    return time_saved(facts.state.tally, facts.costs)


def time_figure(findings: Findings) -> dict[str, Any]:
    """Where the labeler's time goes: with the predictions, by action, against from scratch."""
    time = findings.time
    bar = charts.time_bar(findings.counts, time.costs_seconds.model_dump(), time.from_scratch_seconds)
    return {"time_bar": bar}


TimeSection = Annotated[TimeSaved, SectionSpec(time, "time", Figure("time", time_figure, place=10))]
