"""Labeler time with the predictions vs from scratch, from a cost per action (SPEC §6).

Drawing a box from scratch: 25.5 s, the drawing task measured by Su, Deng and Fei-Fei,
"Crowdsourcing Annotations for Visual Object Detection", AAAI HCOMP workshop 2012. The
other four costs are assumptions of this node (stated on the page and in docs/time-costs.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Final

import numpy as np

from handler.boxes import FloatArray
from handler.engine.outcomes import Outcome

# The labeler's action of each outcome (SPEC §6), in Outcome order: a view of `Outcome.action`.
ACTIONS: Final = tuple(outcome.action for outcome in Outcome)
DRAW_SOURCE: Final = (
    "Su, Deng, Fei-Fei (2012), Crowdsourcing Annotations for Visual Object Detection, "
    "AAAI Workshop on Human Computation"
)
ASSUMED: Final = {
    "accept": "a glance to confirm a box that is already right",
    "nudge": "dragging one or two edges of a box onto the object",
    "relabel": "picking the right class for a well-placed box",
    "delete": "selecting an invented box and deleting it",
}


@dataclass(frozen=True)
class TimeCosts:
    """Seconds per labeler action; `draw` is measured (Su et al. 2012), the others assumed."""

    accept: float = 1.5
    nudge: float = 6.0
    relabel: float = 4.0
    delete: float = 2.0
    draw: float = 25.5

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
                raise ValueError(f"Expected the {item.name} time cost in seconds (>= 0) but got {value!r}")

    def seconds(self, outcome: Outcome) -> float:
        """What the action of `outcome` costs."""
        return float(getattr(self, outcome.cost_field))

    def per_outcome(self) -> FloatArray:
        """Seconds indexed by Outcome."""
        return np.asarray([self.seconds(outcome) for outcome in Outcome], dtype=np.float64)

    def to_dict(self) -> dict[str, float]:
        return {outcome.cost_field: self.seconds(outcome) for outcome in Outcome}


@dataclass(frozen=True)
class TimeEstimate:
    with_predictions: float
    from_scratch: float

    @property
    def saved(self) -> float:
        return self.from_scratch - self.with_predictions

    @property
    def saved_share(self) -> float:
        """Share of the from-scratch time saved; negative when the predictions cost time."""
        return self.saved / self.from_scratch if self.from_scratch else 0.0
