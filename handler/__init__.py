"""Evaluate prelabeling efficiency: how much correcting a detector's pre-labels leave.

The data flows through one room per step:
inputs (node.json) → datasets → engine → report → storage → outputs.
"""

from handler.boxes import BoxTable, Dataset
from handler.engine import Thresholds
from handler.engine.timecost import TimeCosts
from handler.metric import EfficiencyResult, PrelabelingEfficiency, Records, load_records

__all__ = [
    "BoxTable",
    "Dataset",
    "EfficiencyResult",
    "PrelabelingEfficiency",
    "Records",
    "Thresholds",
    "TimeCosts",
    "load_records",
]
