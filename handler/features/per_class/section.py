"""`per_class`: every class's outcomes and score, most labeler time left first."""

from __future__ import annotations

from typing import Annotated, Any, Protocol

import msgspec
from pydantic import AliasChoices, Field

from handler.engine import breakdowns
from handler.engine.analyses.per_class import PER_CLASS
from handler.engine.counts import OutcomeCounts
from handler.features.recommendation.section import Recommendation
from handler.features.time.section import TimeSaved
from handler.sections import charts
from handler.sections.context import RunFacts
from handler.sections.fields import Counts, Score, Section, scored_rows
from handler.sections.shown import Shown


class ClassRow(Section):
    # `class` is a Python keyword: the attribute is `class_name`, the JSON key stays `class`.
    class_name: str = Field(serialization_alias="class", validation_alias=AliasChoices("class", "class_name"))
    counts: Counts
    assistance_score: Score


def per_class(facts: RunFacts) -> tuple[ClassRow, ...]:
    classes = facts.state.of(PER_CLASS)
    counts = classes.counts
    order = breakdowns.most_time_left_first(counts, OutcomeCounts(counts).labeler_seconds(facts.costs))
    rows = scored_rows(counts, order)
    return tuple(ClassRow(class_name=classes.names[row], **figures) for row, figures in rows)


class ClassFigure(msgspec.Struct, frozen=True):
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


class _Drawn(Protocol):
    """What the class figure reads of the findings."""

    @property
    def per_class(self) -> tuple[ClassRow, ...]: ...
    @property
    def recommendation(self) -> Recommendation: ...
    @property
    def time(self) -> TimeSaved: ...


def class_figure(findings: _Drawn) -> ClassFigure:
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


def per_class_figure(findings: _Drawn) -> dict[str, Any]:
    return {"class_figure": class_figure(findings)}


PerClassSection = Annotated[
    tuple[ClassRow, ...],
    Field(
        description="Every class with a box on the scored images, most labeler seconds left first (ties: "
        "lowest score first); false positives by predicted class, the rest by GT class."
    ),
    Shown(per_class, "per_class", draw=per_class_figure),
]
