"""`other_reading`: another reading of the predictions, or of the ground truth, that scores clearly better.

Built from the re-scoring (`handler.readings`); the warning under the verdict, the scores beside
the gauge and the withheld ground-truth suspects all read this one model.
"""

from __future__ import annotations

from typing import Annotated, cast

from pydantic import Field

from handler.datasets.read_options import option_flag
from handler.readings.verdict import LEVEL, Rescored
from handler.sections.context import RunFacts
from handler.sections.fields import Count, Grade, Score, Section
from handler.sections.shown import Shown


class AppliedOption(Section):
    """One read option of a reading: its inputs-file key, its flag, its value."""

    option: str = Field(description="The read option, e.g. PRED_BOX or GT_BOX.")
    flag: str = Field(description="The same option on prelabel-eval and compare, e.g. --pred-box.")
    value: str = Field(description="The option's value (for a class mapping: the report part's file name).")


class OtherReading(Section):
    """A reading of a side's rows (box convention and axis order, coordinate frame, class ids; one or
    two at once) that scores clearly better than the rows as read, re-scored on every shared image
    by the same engine."""

    family: str = Field(description="box, frame or classes; several joined by + (two mistakes at once)")
    side: str = Field(description="Whose rows it reads again: pred, gt, or both.")
    says: str = Field(description="What the reading means, in words.")
    options: tuple[AppliedOption, ...] = Field(min_length=1, description="Every option that applies it.")
    option: str = Field(description="The first of `options` (the read option, e.g. PRED_BOX).")
    flag: str
    value: str
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
    only: tuple[str, ...] = Field(
        default=(),
        description="The images (asset ids), classes (as written) or boxes within images (each one's place "
        "in the predictions file, counted from 0) it reads another way, when only part of the rows was "
        "written so (a step of the pipeline applied to part of the data): no option applies it to them "
        "alone. Empty: every row.",
    )


def other_reading(facts: RunFacts) -> OtherReading | None:
    found: Rescored | None = facts.reading
    if found is None:
        return None
    reading = found.reading
    options = tuple(
        AppliedOption(option=p.key, flag=option_flag(p.key), value=p.value) for p in reading.parts
    )
    sides = {part.side for part in reading.parts}
    return OtherReading(
        family="+".join(reading.families),
        side=sides.pop() if len(sides) == 1 else "both",
        says=reading.says,
        options=options,
        option=options[0].option,
        flag=options[0].flag,
        value=options[0].value,
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
        only=next((part.only for part in reading.parts if part.only), ()),
    )


OtherReadingSection = Annotated[OtherReading | None, Shown(other_reading, "reading")]
