"""The findings sections of issue 13: the per-class routing policy and suspected GT errors.

Both are decided from the merged state (`EvaluationState`), so every executor gives the same.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import orjson

from handler.boxes import IntArray
from handler.engine import routing as engine_routing
from handler.engine.exactsum import ExactSum
from handler.engine.gt_errors import MISSING_GT, SUSPECT_CONFIDENCE, WRONG_CLASS
from handler.engine.outcomes import Tally
from handler.engine.state import EvaluationState
from handler.engine.timecost import TimeCosts
from handler.report.model import Grade, RoutedClass, Routing, SuspectedBoxEntry, SuspectedGtErrors


def _tally(counts: IntArray) -> Tally:
    """Outcome counts scored and graded as a tally (no IoU sum: only the score is asked of it)."""
    return Tally(counts, ExactSum())


def routing(state: EvaluationState, costs: TimeCosts) -> Routing:
    """The policy over every class with a box at some sweep threshold, in class order."""
    sweep, classes = state.sweep, state.classes
    used = next(i for i, point in enumerate(sweep.points) if point.threshold == sweep.used_threshold)
    policy = engine_routing.route(classes.sweep_counts, used, costs)
    thresholds = [point.threshold for point in sweep.points]
    boxes = classes.sweep_counts[:, used, :].sum(axis=1)
    listed = np.flatnonzero(classes.sweep_counts.sum(axis=(1, 2)) > 0)
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
        single_threshold=sweep.used_threshold,
        min_class_boxes=engine_routing.MIN_CLASS_BOXES,
        classes=routed,
        score=_tally(policy.counts).assistance_score,
        seconds_saved=scratch - float(policy.seconds.sum()),
        single_seconds_saved=scratch - float(policy.single_seconds.sum()),
    )


def routing_part(section: Routing) -> bytes:
    """`routing.json`: class -> confidence threshold to pre-label at, or null to draw it."""
    policy = {row.class_name: row.threshold for row in section.classes}
    return orjson.dumps(policy, option=orjson.OPT_INDENT_2)


def suspected_gt_errors(state: EvaluationState) -> SuspectedGtErrors:
    found = state.gt_errors
    fixed = _tally(found.corrected(state.tally.counts))
    listed = tuple(
        SuspectedBoxEntry.model_validate(
            {
                "asset_id": box.asset_id,
                "box": box.box,
                "kind": box.kind,
                "confidence": box.confidence,
                "iou": box.iou,
                "pred_class": box.pred_class,
                "gt_class": box.gt_class,
            }
        )
        for box in found.listed
    )
    return SuspectedGtErrors(
        confidence_from=SUSPECT_CONFIDENCE,
        count=found.count,
        missing_gt=int(found.counts[MISSING_GT]),
        wrong_class=int(found.counts[WRONG_CLASS]),
        listed=listed,
        score_if_gt_fixed=fixed.assistance_score,
        grade_if_gt_fixed=cast(Grade, fixed.grade),  # one of GRADES; the model checks it again
    )
