"""Evaluate prelabeling efficiency: how much correcting a detector's pre-labels leave.

The data flows through one room per step:
inputs (node.json) → datasets → engine → report → storage → outputs.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from handler.boxes import BoxTable, Dataset
    from handler.comparison import compare
    from handler.engine import Thresholds
    from handler.engine.timecost import TimeCosts
    from handler.inputs import load_time_costs
    from handler.metric import PrelabelingEfficiency, Records, load_outcomes, load_records
    from handler.report.findings import Comparison, EfficiencyResult

# The public names, imported on first use: `python -m handler --help` and the node's error
# paths do not pay for the metric API, pydantic models and the report code.
_PUBLIC = {
    "BoxTable": "handler.boxes",
    "Comparison": "handler.report.findings",
    "Dataset": "handler.boxes",
    "EfficiencyResult": "handler.report.findings",
    "PrelabelingEfficiency": "handler.metric",
    "Records": "handler.metric",
    "load_outcomes": "handler.metric",
    "load_records": "handler.metric",
    "load_time_costs": "handler.inputs",
    "Thresholds": "handler.engine",
    "compare": "handler.comparison",
    "TimeCosts": "handler.engine.timecost",
}
__all__ = [
    "BoxTable",
    "Comparison",
    "Dataset",
    "EfficiencyResult",
    "PrelabelingEfficiency",
    "Records",
    "Thresholds",
    "TimeCosts",
    "compare",
    "load_outcomes",
    "load_records",
    "load_time_costs",
]


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'handler' has no attribute {name!r}")
    return getattr(import_module(_PUBLIC[name]), name)
