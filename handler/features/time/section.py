"""`time`: estimated labeler time with the predictions vs drawing every GT box from scratch."""

from __future__ import annotations

from typing import Annotated, Any, Protocol

from pydantic import Field

from handler.engine.calibration import MIN_SUPPORT
from handler.engine.counts import OutcomeCounts
from handler.engine.outcomes import Tally
from handler.engine.timecost import ACTIONS, CostFit, Shape, TimeCosts
from handler.sections import charts
from handler.sections.context import RunFacts
from handler.sections.fields import Counts, Seconds, Section
from handler.sections.shown import Shown
from handler.sections.wording import ShapeWords, shape_words


class ActionCosts(Section):
    """Seconds per labeler action."""

    accept: Seconds
    nudge: Seconds
    relabel: Seconds
    delete: Seconds
    draw: Seconds


class FittedAction(Section):
    """One action's fitted seconds: the 95 % bootstrap interval over tasks and the tasks that show it."""

    low: Seconds
    high: Seconds
    tasks: int = Field(ge=0, description="Tasks (Label Studio) or jobs (CVAT) that show the action.")
    fitted: bool = Field(description="False: too few tasks show it, so its default was kept.")


class CostsSource(Section):
    """Whose seconds these are: the labeling tool's log they were fitted from (prelabel-eval calibrate)."""

    summary: str = Field(description="`fitted from 412 tasks of export.json, 2026-11-30`.")
    files: list[str]
    log_format: str
    tasks: int = Field(ge=0)
    unit: str = Field(description="What a task is in that tool: tasks (Label Studio) or jobs (CVAT).")
    date: str
    actions: dict[str, FittedAction]
    min_support: int = Field(description="Tasks an action needs before its seconds are fitted.")
    skipped: dict[str, int] = Field(description="Log entries left out of the fit, by reason.")
    overhead_seconds: float | None = Field(
        description="Per task besides the actions (not used: it is paid either way)."
    )
    r2: float | None = Field(description="Share of the variance of the task times the fit explains.")
    rmse_seconds: float | None


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
    cited: dict[str, str] = Field(description="The sources of the default seconds the literature measures.")
    assumptions: dict[str, str] = Field(description="The default seconds no source we know measures.")
    costs_source: CostsSource | None = Field(
        description="Where fitted seconds come from; null for the defaults or seconds set by hand."
    )
    shape: Shape = Field(
        default="boxes", description="What the labeler draws and corrects: boxes, or masks (scored on masks)."
    )

    @property
    def words(self) -> ShapeWords:
        """What the labeler draws (`box`, `boxes` or `mask`, `masks`) and its actions as said."""
        return shape_words(self.shape)


def time_saved(tally: Tally, costs: TimeCosts) -> TimeSaved:
    estimate = OutcomeCounts(tally.counts).time_estimate(costs)
    cited, assumed = costs.sources
    return TimeSaved(
        costs_seconds=ActionCosts(**costs.to_dict()),
        costs_adjusted=costs != costs.defaults,
        with_predictions_seconds=estimate.with_predictions,
        from_scratch_seconds=estimate.from_scratch,
        saved_seconds=estimate.saved,
        saved_share=estimate.saved_share,
        cited=cited,
        assumptions=assumed,
        costs_source=None if costs.fit is None else costs_source(costs.fit),
        shape=costs.shape,
    )


def costs_source(fit: CostFit) -> CostsSource:
    return CostsSource(
        summary=fit.source,
        files=list(fit.files),
        log_format=fit.log_format,
        tasks=fit.tasks,
        unit=fit.unit,
        date=fit.date,
        actions={
            action: FittedAction(
                low=fit.actions[action].interval[0],
                high=fit.actions[action].interval[1],
                tasks=fit.actions[action].support,
                fitted=fit.actions[action].fitted,
            )
            for action in ACTIONS
        },
        min_support=MIN_SUPPORT,
        skipped=dict(fit.skipped),
        overhead_seconds=fit.overhead_seconds,
        r2=fit.r2,
        rmse_seconds=fit.rmse_seconds,
    )


def time(facts: RunFacts) -> TimeSaved:
    return time_saved(facts.state.tally, facts.costs)


class _Drawn(Protocol):
    """What the time bar reads of the findings."""

    @property
    def time(self) -> TimeSaved: ...
    @property
    def counts(self) -> Counts: ...


def time_figure(findings: _Drawn) -> dict[str, Any]:
    """Where the labeler's time goes: with the predictions, by action, against from scratch."""
    time = findings.time
    bar = charts.time_bar(findings.counts, time.costs_seconds.model_dump(), time.from_scratch_seconds)
    return {"time_bar": bar}


TimeSection = Annotated[TimeSaved, Shown(time, "time", draw=time_figure)]
