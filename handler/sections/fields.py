"""What every findings section is made of: the frozen base model, bounded numbers, outcome counts."""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from handler.boxes import IntArray
from handler.engine.counts import OutcomeCounts
from handler.engine.outcomes import OUTCOMES, Tally

Count = Annotated[int, Field(ge=0)]
Score = Annotated[float, Field(ge=0, le=1)]
Threshold = Annotated[float, Field(ge=0, le=1)]
Seconds = Annotated[float, Field(ge=0)]
# Literals, not the engine's tuples, so that mypy checks them; a test pins them to GRADES and SIZE_NAMES.
Grade = Literal["Production-grade", "Strong assist", "Partial assist", "Minimal assist"]
SizeName = Literal["small", "medium", "large"]
OutcomeKey = Literal["correct", "shifted", "class_confused", "false_positive", "false_negative"]


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Counts(Section):
    """Boxes per outcome (a matched pair counts once) and their total."""

    correct: Count
    shifted: Count
    class_confused: Count
    false_positive: Count
    false_negative: Count
    total: Count

    @classmethod
    def of(cls, tally: Tally) -> Counts:
        return cls.model_validate(tally.count_dict())

    def outcomes(self) -> dict[str, int]:
        """The five outcome counts, in outcome order, without the total."""
        return {name: getattr(self, name) for name in OUTCOMES}


class Shares(Section):
    """Each outcome's count / total (0 when total is 0)."""

    correct: Score
    shifted: Score
    class_confused: Score
    false_positive: Score
    false_negative: Score

    @classmethod
    def of(cls, tally: Tally) -> Shares:
        return cls.model_validate(tally.shares())


class Parameters(Section):
    iou_min: float
    iou_perfect: float
    confidence_threshold: Threshold
    confidence_threshold_input: str = Field(description="CONFIDENCE_THRESHOLD exactly as given.")
    confidence_threshold_replaced: bool = Field(description="The input was not a number, so 0 was used.")


def outcome_counts(row: IntArray) -> Counts:
    """One row of five outcome counts as a counts section (with its total)."""
    return Counts(**dict(zip(OUTCOMES, row.tolist(), strict=True)), total=int(row.sum()))


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
