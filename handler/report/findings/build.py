"""The findings (kind `dataset_intelligence_findings_v1`) of one run, as the `Findings` model."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Final, cast

from handler.engine import Outcome, Tally
from handler.engine.analyses.per_class import PER_CLASS
from handler.engine.bootstrap import Bootstrap
from handler.engine.state import EvaluationState
from handler.inputs import NodeInputs
from handler.report.findings.context import RunFacts
from handler.report.findings.fields import Counts, Grade, Shares
from handler.report.findings.model import (
    KIND,
    Execution,
    Findings,
    Parameters,
    Skipped,
    SkippedBoxEntry,
    TimeSaved,
)
from handler.report.findings.model import (
    DatasetFigures as DatasetSection,
)
from handler.report.findings.sections import build_sections
from handler.report.findings.sections.time_saved import time_saved
from handler.report.findings.sections.uncertainty import borderline_clause
from handler.report.findings.wording import counted, duration

# What is left leans one way when one kind of fix is this many times the other.
LEAN_RATIO: Final = 1.5


def lean(tally: Tally) -> str:
    """Whether what is left leans towards drawing (FN), deleting (FP), or neither."""
    fn, fp = tally.count(Outcome.FALSE_NEGATIVE), tally.count(Outcome.FALSE_POSITIVE)
    missed = counted(fn, "missed object", "missed objects")
    invented = counted(fp, "invented box", "invented boxes")
    if fn > LEAN_RATIO * fp:
        return f"what is left leans towards drawing missed objects ({missed} vs {invented})"
    if fp > LEAN_RATIO * fn:
        return f"what is left leans towards deleting invented boxes ({invented} vs {missed})"
    return f"what is left is balanced between drawing and deleting ({missed}, {invented})"


def time_clause(time: TimeSaved) -> str:
    """The labeler time pre-labeling saves (or costs), against drawing every box from scratch."""
    scratch = duration(time.from_scratch_seconds)
    if time.saved_seconds < 0:
        return (
            f"pre-labeling would cost about {duration(-time.saved_seconds)} more than drawing every box "
            f"({duration(time.with_predictions_seconds)} instead of {scratch})"
        )
    saved = duration(time.saved_seconds)
    return f"pre-labeling saves about {saved} of the {scratch} it takes to draw every box"


def verdict(
    tally: Tally, reason: str | None, time: TimeSaved, spread: Bootstrap | None, recommended: str
) -> str:
    """Two sentences: the score and grade at the threshold given, the time it saves and which way
    what is left leans; then the recommendation."""
    if reason is not None:
        return f"Nothing could be scored: {reason}."
    borderline = "" if spread is None else borderline_clause(spread, tally.grade)
    return (
        f"Assistance score {tally.assistance_score:.2f} ({tally.grade}{borderline}): "
        f"{time_clause(time)}; {lean(tally)}. Recommended: {recommended}."
    )


def _skipped(state: EvaluationState) -> Skipped:
    listed = tuple(SkippedBoxEntry(**listed.skip.to_dict()) for listed in state.read.skipped)
    return Skipped(count=state.figures.gt_skipped + state.figures.pred_skipped, listed=listed)


def _parameters(inputs: NodeInputs) -> Parameters:
    return Parameters(
        iou_min=inputs.iou_min,
        iou_perfect=inputs.iou_perfect,
        confidence_threshold=inputs.confidence.value,
        confidence_threshold_input=inputs.confidence.given,
        confidence_threshold_replaced=inputs.confidence.replaced,
    )


def _dataset(facts: RunFacts) -> DatasetSection:
    figures = facts.state.figures
    return DatasetSection(
        images=figures.images,
        gt_objects=figures.gt_objects,
        predictions=figures.predictions,
        predictions_kept=figures.predictions_kept,
        gt_only_images=figures.gt_only_images,
        pred_only_images=figures.pred_only_images,
        gt_source=facts.gt.source,
        pred_source=facts.pred.source,
        gt_format=facts.gt.format,
        pred_format=facts.pred.format,
        gt_read_as=facts.gt.read_as,
        pred_read_as=facts.pred.read_as,
        classes=len(facts.state.of(PER_CLASS).names),
        crowd_excluded=figures.crowd_excluded,
    )


def build_findings(facts: RunFacts, report_id: str, execution: Execution) -> Findings:
    tally, reason = facts.state.tally, facts.reason
    # Each registered section is checked by its field's type when `Findings` is built.
    sections: dict[str, Any] = build_sections(Findings, facts)
    return Findings(
        kind=KIND,
        report_id=report_id,
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        efficiency_level=cast(Grade, tally.grade),  # one of GRADES; the model checks it again
        assistance_score=tally.assistance_score,
        verdict=verdict(
            tally, reason, time_saved(tally, facts.costs), facts.spread, sections["recommendation"].says
        ),
        reason=reason,
        counts=Counts.of(tally),
        shares=Shares.of(tally),
        mean_iou=tally.mean_iou,
        parameters=_parameters(facts.inputs),
        dataset=_dataset(facts),
        skipped=_skipped(facts.state),
        notes=tuple(warning.message for warning in sections["warnings"]),
        execution=execution,
        **sections,
    )
