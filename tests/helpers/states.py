"""Compare evaluation states by value (numpy arrays inside: plain equality does not do)."""

from __future__ import annotations

from typing import Any

from handler.engine.state import EvaluationState


def canonical(state: EvaluationState) -> dict[str, Any]:
    """Every figure of a state as plain data, in its canonical order."""
    return {
        "tally": (state.tally.counts.tolist(), state.tally.same_class_iou),
        "sweep": [
            (p.threshold, p.predictions_kept, p.tally.counts.tolist(), p.tally.same_class_iou)
            for p in state.sweep.points
        ],
        "assets": state.asset_ids,
        "images": state.image_counts.tolist(),
        "classes": (state.classes.names, state.classes.counts.tolist(), state.classes.confusions.tolist()),
        "sizes": None if state.sizes is None else state.sizes.tolist(),
        "near": (state.near_misses.counts.tolist(), state.near_misses.missed_gt),
        "figures": state.figures,
        "skipped": [(s.side, s.skip) for s in state.skipped],
        "class_sweep": state.classes.sweep_counts.tolist(),
        "gt_errors": (
            state.gt_errors.counts.tolist(),
            [
                (b.confidence, b.asset_id, b.box, b.kind, b.iou, b.pred_class, b.gt_class)
                for b in state.gt_errors.listed
            ],
        ),
    }
