"""How a run is cut: in one process below MIN_BOXES_PER_WORKER per core (its shards on threads),
and never into shards of more than about MAX_BOXES_PER_SHARD boxes, whatever the executor; the
findings do not change."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest
from helpers.paths import THIRD_PARTY

import handler.execution.run as execution
from handler.execution import ExecutionOptions, read_and_plan
from handler.execution.executors import InProcess
from handler.features import ANALYSES
from handler.forked import local_cores
from handler.inputs import parse_inputs
from handler.pipeline import run
from handler.report.finishers import REPORT_PARTS
from handler.report.ledger import OUTCOME_FORMATS, write_outcomes
from handler.report.publish.asset import read_report_part
from handler.storage.local import LocalStore

COCO = THIRD_PARTY / "coco_val2014_100"
INPUTS = {
    "GT_DATASET": str(COCO / "instances_val2014_100.json"),
    "PRED_DATASET": str(COCO / "instances_val2014_fakebbox100_results.json"),
    "CONFIDENCE_THRESHOLD": "0",
}


def _findings_and_lines(store: LocalStore) -> tuple[dict[str, object], bytes]:
    result = run(parse_inputs(INPUTS), store)
    findings = json.loads(read_report_part(store, result.outputs.report_id, REPORT_PARTS["findings"]))
    for key in ("report_id", "created_at", "execution"):
        findings.pop(key)
    rows = io.BytesIO()
    write_outcomes(store, result.outputs.report_id, OUTCOME_FORMATS["jsonl"], rows)
    return findings, rows.getvalue()


def test_a_small_input_stays_in_this_process_in_one_shard(tmp_path: Path) -> None:
    plan = read_and_plan(parse_inputs(INPUTS), LocalStore(tmp_path), ExecutionOptions(), ANALYSES)
    assert plan.executor.engine == "in-process" and len(plan.tasks) == 1


def test_shards_are_cut_to_size_in_one_process_with_the_same_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalStore(tmp_path)
    one_shard = _findings_and_lines(store)
    monkeypatch.setattr(execution, "MAX_BOXES_PER_SHARD", 300)
    plan = read_and_plan(parse_inputs(INPUTS), store, ExecutionOptions(), ANALYSES)
    boxes = sum(len(task.paired.gt) + len(task.paired.pred) for task in plan.tasks)
    # The shards run on threads, the cores this process may use: the same findings, in shard order.
    assert plan.executor == InProcess(threads=local_cores())
    assert len(plan.tasks) == math.ceil(boxes / 300) > 2
    assert _findings_and_lines(store) == one_shard
