"""`per_class`: every class's outcomes and score, most labeler time left first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, TypedDict

from pydantic import AliasChoices, Field

from handler.boxes import IntArray
from handler.engine import breakdowns
from handler.engine.counts import OutcomeCounts
from handler.features.per_class.partial import PER_CLASS
from handler.report import charts
from handler.report.findings.context import RunFacts
from handler.report.findings.fields import Counts, Score, Section, outcome_counts
from handler.report.findings.shown import Shown

if TYPE_CHECKING:
    from handler.report.findings.model import Findings


class ClassRow(Section):
    # `class` is a Python keyword: the attribute is `class_name`, the JSON key stays `class`.
    class_name: str = Field(serialization_alias="class", validation_alias=AliasChoices("class", "class_name"))
    counts: Counts
    assistance_score: Score


class ScoredRow(TypedDict):
    counts: Counts
    assistance_score: float


def scored_rows(counts: IntArray, order: IntArray) -> list[tuple[int, ScoredRow]]:
    """Rows of an outcome-count table, in `order`: (row index, its counts and assistance score)."""
    scores = OutcomeCounts(counts).scores
    return [
        (row, {"counts": outcome_counts(counts[row]), "assistance_score": float(scores[row])})
        for row in order.tolist()
    ]


def per_class(facts: RunFacts) -> tuple[ClassRow, ...]:
    classes = facts.state.of(PER_CLASS)
    counts = classes.counts
    order = breakdowns.most_time_left_first(counts, OutcomeCounts(counts).labeler_seconds(facts.costs))
    rows = scored_rows(counts, order)
    return tuple(ClassRow(class_name=classes.names[row], **figures) for row, figures in rows)


@dataclass(frozen=True)
class ClassFigure:
    classes: int
    head: charts.ClassChart
    tail: charts.ClassChart | None
    tail_seconds: float
    threshold: float  # the recommendation's single threshold
    unlisted: list[str]  # recommended classes without a box at the threshold used


def decision(threshold: float | None, single: float) -> str:
    """A class's recommendation in a few words when it is its own: `pre-label ≥ 0.45`, `draw`;
    nothing for a class at the recommendation's single threshold (the note says it once)."""
    if threshold is None:
        return "draw"
    return "" if threshold == single else f"pre-label ≥ {threshold:g}"


def class_figure(findings: Findings) -> ClassFigure:
    """Every class with a box, most time left first, with its own recommendation; the tail folded."""
    recommended = findings.recommendation
    costs = findings.time.costs_seconds.model_dump()
    rows: list[charts.ClassRow] = [
        (
            row.class_name,
            row.counts,
            row.assistance_score,
            decision(recommended.threshold_for(row.class_name), recommended.threshold),
        )
        for row in findings.per_class
    ]
    most = max([charts.labeler_total(counts, costs) for _, counts, _, _ in rows] or [0.0])
    head, tail = rows[: charts.CLASS_HEAD], rows[charts.CLASS_HEAD :]
    tail_chart = charts.class_chart(tail, costs, most) if tail else None
    shown = {row.class_name for row in findings.per_class}
    return ClassFigure(
        classes=len(rows),
        head=charts.class_chart(head, costs, most),
        tail=tail_chart,
        tail_seconds=sum(bar.seconds for bar in tail_chart.rows) if tail_chart else 0.0,
        threshold=recommended.threshold,
        unlisted=[row.class_name for row in recommended.classes if row.class_name not in shown],
    )


def per_class_figure(findings: Findings) -> dict[str, Any]:
    return {"class_figure": class_figure(findings)}


PerClassSection = Annotated[
    tuple[ClassRow, ...],
    Field(
        description="Every class with a box on the scored images, most labeler seconds left first (ties: "
        "lowest score first); false positives by predicted class, the rest by GT class."
    ),
    Shown(per_class, "per_class", draw=per_class_figure),
]
