"""Compare's box transitions as rows (`prelabel-eval compare --transitions FILE`): every GT box both
runs scored, its outcome, IoU and matched prediction under A and under B, and the seconds B adds."""

from __future__ import annotations

from typing import Final

from handler.engine.outcomes import OUTCOMES
from handler.engine.transitions import Transitions
from handler.report.json_lines import Number, Text
from handler.report.ledger.table import Table

TRANSITION_COLUMNS: Final = (
    "asset_id",
    "gt_index",
    "gt_class",
    "outcome_a",
    "outcome_b",
    "seconds_added",
    "iou_a",
    "iou_b",
    "pred_index_a",
    "pred_index_b",
    "pred_class_a",
    "pred_class_b",
    "confidence_a",
    "confidence_b",
)


def transition_table(moved: Transitions) -> Table:
    """The rows in A's order (asset order, then the GT file's); seconds at the comparison's costs."""
    a, b = moved.a, moved.b
    rows_a, rows_b = moved.rows_a, moved.rows_b
    pred_a, pred_b = a.pred_index[rows_a], b.pred_index[rows_b]
    return {
        "asset_id": Text(a.asset_ids, a.image[rows_a]),
        "gt_index": Number(a.source_index[rows_a]),
        "gt_class": Text(a.class_names, a.class_id[rows_a]),
        "outcome_a": Text(OUTCOMES, moved.outcome_a),
        "outcome_b": Text(OUTCOMES, moved.outcome_b),
        "seconds_added": Number(moved.added_seconds),
        "iou_a": Number(a.iou[rows_a]),
        "iou_b": Number(b.iou[rows_b]),
        "pred_index_a": Number(pred_a, pred_a < 0),
        "pred_index_b": Number(pred_b, pred_b < 0),
        "pred_class_a": Text(a.class_names, a.pred_class[rows_a]),
        "pred_class_b": Text(b.class_names, b.pred_class[rows_b]),
        "confidence_a": Number(a.confidence[rows_a]),
        "confidence_b": Number(b.confidence[rows_b]),
    }
