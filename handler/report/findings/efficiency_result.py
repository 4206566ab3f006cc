"""What the Python metrics' `compute` returns: the score, the grade, the figures behind them and
labeler time, made of the findings' own section models (so `to_dict` matches the report's keys)."""

from __future__ import annotations

from typing import Any, cast

from pydantic import BaseModel, ConfigDict

from handler.engine import Tally
from handler.engine.timecost import TimeCosts
from handler.features.time.section import TimeSaved, time_saved
from handler.sections.fields import Counts, Grade, Score, Shares


class EfficiencyResult(BaseModel):
    """What `compute` returns: the score, the grade, the figures behind them and labeler time.

    The figures are the findings' own section models, so `to_dict` matches the report's keys.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    assistance_score: Score
    efficiency_level: Grade
    counts: Counts
    shares: Shares
    mean_iou: Score | None
    time: TimeSaved

    @classmethod
    def of(cls, tally: Tally, costs: TimeCosts) -> EfficiencyResult:
        return cls(
            assistance_score=tally.assistance_score,
            efficiency_level=cast(Grade, tally.grade),  # one of GRADES; the model checks it again
            counts=Counts.of(tally),
            shares=Shares.of(tally),
            mean_iou=tally.mean_iou,
            time=time_saved(tally, costs),
        )

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def __str__(self) -> str:
        outcomes = ", ".join(f"{name} {count}" for name, count in self.counts.outcomes().items())
        return f"{self.efficiency_level} (assistance score {self.assistance_score:.3f}): {outcomes}"
