"""Compare evaluation states by value (numpy arrays inside: plain equality does not do)."""

from __future__ import annotations

from typing import Any

from handler.engine.plugin import plain
from handler.engine.state import EvaluationState


def canonical(state: EvaluationState) -> dict[str, Any]:
    """Every figure of a state as plain data: the tally, what reading found, and each analysis's
    value (what must not depend on the split), by analysis name."""
    return {
        "tally": (state.tally.counts.tolist(), state.tally.same_class_iou),
        "skips": plain(state.skips),
        **{analysis.name: analysis.value(part) for analysis, part in state.partials.items()},
    }
