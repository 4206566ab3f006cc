"""`per_class`: every class's outcomes and score, most labeler time left first."""

from __future__ import annotations

from typing import Annotated, TypedDict

from pydantic import AliasChoices, Field

from handler.boxes import IntArray
from handler.engine import breakdowns
from handler.engine.analyses.per_class import PER_CLASS
from handler.engine.counts import OutcomeCounts
from handler.report.context import RunFacts
from handler.report.fields import Counts, Score, Section, outcome_counts
from handler.report.sections import SectionSpec


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


PerClassSection = Annotated[
    tuple[ClassRow, ...],
    Field(
        description="Every class with a box on the scored images, most labeler seconds left first (ties: "
        "lowest score first); false positives by predicted class, the rest by GT class."
    ),
    SectionSpec(per_class, "per_class"),
]
