"""`other_reading` (issue 24): another reading of the predictions that scores clearly better.

Built from the re-scoring (`engine.readings`); the warning under the verdict, the scores beside
the gauge and the withheld ground-truth suspects all read this one model.
"""

from __future__ import annotations

from typing import Annotated, cast

from pydantic import Field

from handler.datasets.read_options import option_flag
from handler.engine.readings.verdict import LEVEL, Rescored
from handler.report.findings.context import RunFacts
from handler.report.findings.fields import Count, Grade, Score, Section
from handler.report.findings.sections import SectionSpec


class OtherReading(Section):
    """A reading of the predictions' rows (box convention, coordinate frame, class ids) that scores
    clearly better than the rows as read, re-scored on every shared image by the same engine."""

    family: str = Field(description="box, frame or classes")
    says: str = Field(description="What the reading means, in words.")
    option: str = Field(description="The read option that applies it, e.g. PRED_BOX.")
    flag: str = Field(description="The same option on prelabel-eval and compare, e.g. --pred-box.")
    value: str = Field(description="The option's value (for a class mapping: the report part's file name).")
    images: Count
    score_as_read: Score
    grade_as_read: Grade
    score: Score
    grade: Grade
    gain_low: float = Field(description="Low end of the paired bootstrap interval of the gain.")
    gain_high: float
    level: float
    candidates: Count = Field(description="Readings re-scored.")
    class_map: dict[str, str] = Field(
        default_factory=dict, description="Class as written → GT class (class readings: class_map.json)."
    )


def other_reading(facts: RunFacts) -> OtherReading | None:
    found: Rescored | None = facts.reading
    if found is None:
        return None
    reading = found.reading
    return OtherReading(
        family=reading.family,
        says=reading.says,
        option=reading.key,
        flag=option_flag(reading.key),
        value=reading.value,
        images=found.images,
        score_as_read=found.as_read.score,
        grade_as_read=cast(Grade, found.as_read.grade),
        score=found.under.score,
        grade=cast(Grade, found.under.grade),
        gain_low=found.gain.low,
        gain_high=found.gain.high,
        level=float(LEVEL),
        candidates=found.tried,
        class_map=dict(reading.class_map),
    )


OtherReadingSection = Annotated[OtherReading | None, SectionSpec(other_reading)]
