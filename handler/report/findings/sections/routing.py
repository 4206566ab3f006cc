"""`routing` (issue 13 item 2): a per-class pre-labeling policy (its `routing.json` part: report/exports/).

Decided from the merged state (`EvaluationState`), so every executor gives the same.
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import AliasChoices, Field

from handler.engine import routing as engine_routing
from handler.engine.analyses.confidence_sweep import CONFIDENCE_SWEEP
from handler.engine.counts import OutcomeCounts
from handler.engine.routing import MIN_CLASS_BOXES
from handler.report.findings.context import RunFacts
from handler.report.findings.fields import Count, Score, Section, Threshold
from handler.report.findings.sections import SectionSpec


class RoutedClass(Section):
    class_name: str = Field(serialization_alias="class", validation_alias=AliasChoices("class", "class_name"))
    action: Literal["pre-label", "draw"]
    threshold: Threshold | None = Field(description="The confidence threshold to pre-label at; null to draw.")
    seconds_saved_vs_single: float = Field(
        description="Labeler seconds this class saves against the single threshold (>= 0 unless guarded)."
    )
    boxes: Count = Field(description="GT objects plus the class's false positives at the single threshold.")
    guarded: bool = Field(
        description=f"Fewer than {MIN_CLASS_BOXES} boxes: the class keeps the single threshold."
    )


class Routing(Section):
    __doc__ = (
        "A per-class pre-labeling policy: each class at its own sweep threshold, or drawn from scratch, "
        "whichever leaves the least labeler time; classes are treated as independent. A class with fewer "
        f"than {MIN_CLASS_BOXES} boxes keeps the single threshold."
    )

    single_threshold: Threshold
    min_class_boxes: Count
    classes: tuple[RoutedClass, ...]
    score: Score = Field(description="The assistance score under the policy (drawn classes count as drawn).")
    seconds_saved: float = Field(description="Labeler seconds the policy saves against drawing everything.")
    single_seconds_saved: float = Field(description="What the single threshold saves (never more).")


def routing(facts: RunFacts) -> Routing:
    """The policy over every class with a box at some sweep threshold, in class order."""
    swept = facts.state.of(CONFIDENCE_SWEEP)
    sweep, classes, single = swept.sweep, swept.by_class, facts.inputs.confidence.value
    used = sweep.column(single)
    policy = engine_routing.route(classes.counts, used, facts.costs)
    thresholds = [point.threshold for point in sweep.points]
    boxes = classes.counts[:, used, :].sum(axis=1)
    listed = np.flatnonzero(classes.counts.sum(axis=(1, 2)) > 0)
    routed = tuple(
        RoutedClass(
            class_name=classes.names[row],
            action="draw" if policy.choice[row] == engine_routing.DRAW else "pre-label",
            threshold=None if policy.choice[row] == engine_routing.DRAW else thresholds[policy.choice[row]],
            seconds_saved_vs_single=float(policy.single_seconds[row] - policy.seconds[row]),
            boxes=int(boxes[row]),
            guarded=bool(policy.guarded[row]),
        )
        for row in listed.tolist()
    )
    scratch = float(policy.scratch_seconds.sum())
    return Routing(
        single_threshold=single,
        min_class_boxes=engine_routing.MIN_CLASS_BOXES,
        classes=routed,
        score=OutcomeCounts(policy.counts).score,
        seconds_saved=scratch - float(policy.seconds.sum()),
        single_seconds_saved=scratch - float(policy.single_seconds.sum()),
    )


RoutingSection = Annotated[Routing, SectionSpec(routing, "routing")]
