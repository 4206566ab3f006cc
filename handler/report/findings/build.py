"""The findings of one run, as the `Findings` model: the run-level fields here, each feature's by
its own builder."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Final, cast

from handler.engine import Outcome, Tally
from handler.engine.analyses.box_counts import BOX_COUNTS
from handler.engine.analyses.per_class import PER_CLASS
from handler.engine.bootstrap import Bootstrap
from handler.engine.state import EvaluationState
from handler.features.dataset.section import DatasetFigures, Skipped, SkippedBoxEntry
from handler.features.gauge.section import borderline_clause
from handler.features.time.section import time_saved
from handler.inputs import NodeInputs
from handler.report.findings.model import KIND, VERSION, Execution, Findings, TimeSaved
from handler.sections.context import RunFacts
from handler.sections.fields import Counts, Grade, Parameters
from handler.sections.shown import build_sections
from handler.sections.wording import SHAPE_WORDS, ShapeWords, counted, duration, saved_time

# What is left leans one way when one kind of fix is this many times the other.
LEAN_RATIO: Final = 1.5


def lean(tally: Tally, words: ShapeWords = SHAPE_WORDS["boxes"]) -> str:
    """Whether what is left leans towards drawing (FN), deleting (FP), or neither; `words` name
    what was predicted (boxes, or masks)."""
    fn, fp = tally.count(Outcome.FALSE_NEGATIVE), tally.count(Outcome.FALSE_POSITIVE)
    missed = counted(fn, "missed object", "missed objects")
    many = words.many
    invented = words.count(fp, "invented")
    if fn == fp == 0:
        return "nothing is left to draw or delete"
    if fn > LEAN_RATIO * fp:
        return f"what is left leans towards drawing missed objects ({missed} vs {invented})"
    if fp > LEAN_RATIO * fn:
        return f"what is left leans towards deleting invented {many} ({invented} vs {missed})"
    return f"what is left is balanced between drawing and deleting ({missed}, {invented})"


def time_clause(time: TimeSaved) -> str:
    """The labeler time pre-labeling saves (or costs), against drawing every box (mask) from scratch."""
    scratch = duration(time.from_scratch_seconds)
    if saved_time(time.saved_seconds) == "no time":
        return f"pre-labeling saves no time over drawing {time.words.every} ({scratch})"
    if time.saved_seconds < 0:
        return (
            f"pre-labeling would cost about {duration(-time.saved_seconds)} more than drawing "
            f"{time.words.every} ({duration(time.with_predictions_seconds)} instead of {scratch})"
        )
    saved = duration(time.saved_seconds)
    return f"pre-labeling saves about {saved} of the {scratch} it takes to draw {time.words.every}"


def verdict(
    tally: Tally, reason: str | None, time: TimeSaved, spread: Bootstrap | None, misread: bool
) -> str:
    """The score and grade at the threshold given, the time it saves and which way what is left
    leans (the recommendation is its own field: `Findings.headline` says both). On files the node
    thinks it misread, the score is the one as read: `headline` puts how to read them first."""
    if reason is not None:
        return f"Nothing could be scored: {reason}."
    borderline = "" if spread is None else borderline_clause(spread, tally.grade)
    graded = f"{tally.assistance_score:.2f} ({tally.grade}{borderline})"
    scored = f"{graded}: {time_clause(time)}; {lean(tally, time.words)}."
    return f"As read, assistance score {scored}" if misread else f"Assistance score {scored}"


def _skipped(state: EvaluationState) -> Skipped:
    listed = tuple(SkippedBoxEntry(**listed.skip.to_dict()) for listed in state.skips.listed)
    return Skipped(count=state.of(BOX_COUNTS).gt_skipped + state.of(BOX_COUNTS).pred_skipped, listed=listed)


def _parameters(inputs: NodeInputs) -> Parameters:
    return Parameters(
        iou_min=inputs.iou_min,
        iou_perfect=inputs.iou_perfect,
        confidence_threshold=inputs.confidence.value,
        confidence_threshold_input=inputs.confidence.given,
        confidence_threshold_replaced=inputs.confidence.replaced,
    )


def _dataset(facts: RunFacts) -> DatasetFigures:
    figures = facts.state.of(BOX_COUNTS)
    return DatasetFigures(
        images=figures.images,
        gt_objects=figures.gt_objects,
        predictions=figures.predictions,
        predictions_kept=figures.predictions_kept,
        gt_only_images=figures.gt_only_images,
        pred_only_images=figures.pred_only_images,
        gt_source=facts.gt.source,
        pred_source=facts.pred.source,
        gt_read_as=facts.gt.read_as + _found_on_part(facts, "gt"),
        pred_read_as=facts.pred.read_as + _found_on_part(facts, "pred"),
        classes=len(facts.state.of(PER_CLASS).names),
        crowd_excluded=figures.crowd_excluded,
    )


def _found_on_part(facts: RunFacts, side: str) -> tuple[str, ...]:
    """The reading of part of `side`'s rows the run found, as a part of its read-as line: no option
    applies it, so the line says it stands beside the reading given (which reads every row)."""
    found = facts.reading
    if found is None or not found.reading.partial or not found.reading.of(side):
        return ()
    return (
        f"{found.reading.says_of(side)} (found, not applied: no read option applies it to part of the files)",
    )


def build_findings(facts: RunFacts, report_id: str, execution: Execution) -> Findings:
    tally, reason = facts.state.tally, facts.reason
    # Each registered section is checked by its field's type when `Findings` is built.
    sections: dict[str, Any] = build_sections(Findings, facts)
    return Findings(
        kind=KIND,
        version=VERSION,
        report_id=report_id,
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        efficiency_level=cast(Grade, tally.grade),  # one of GRADES; the model checks it again
        assistance_score=tally.assistance_score,
        verdict=verdict(
            tally, reason, time_saved(tally, facts.costs), facts.spread, sections["recommendation"].misread
        ),
        reason=reason,
        counts=Counts.of(tally),
        mean_iou=tally.mean_iou,
        parameters=_parameters(facts.inputs),
        dataset=_dataset(facts),
        skipped=_skipped(facts.state),
        execution=execution,
        **sections,
    )
