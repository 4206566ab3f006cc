"""`prelabel-eval compare` and `handler.compare` on real files: COCO val2014 with cocoapi's fake results."""

from __future__ import annotations

import json
import statistics
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers.builders import write_json
from helpers.node_run import cli_as_text
from helpers.paths import THIRD_PARTY

from handler.comparison import compare
from handler.execution import ExecutionOptions, read_and_plan
from handler.features import ANALYSES, COMPARE_ONLY
from handler.inputs import parse_inputs
from handler.pipeline import run
from handler.storage.local import LocalStore

COCO = THIRD_PARTY / "coco_val2014_100"
GT, PRED_A = COCO / "instances_val2014_100.json", COCO / "instances_val2014_fakebbox100_results.json"
KEYS = {
    "better",
    "difference",
    "time_saved_difference",
    "per_class",
    "transitions",
    "scored_on",
    "scored_on_note",
}


def _half(work: Path, keep_confident: bool) -> Path:
    """A's results with the low-confidence (or the high-confidence) half dropped."""
    results = json.loads(PRED_A.read_text(encoding="utf-8"))
    median = statistics.median(r["score"] for r in results)
    kept = [r for r in results if (r["score"] >= median) == keep_confident]
    return write_json(work / f"half_{keep_confident}.json", kept)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`prelabel-eval compare ARGS` in this process."""
    return cli_as_text("compare", *args)


def _findings(work: Path, pred: Path) -> dict[str, Any]:
    inputs = parse_inputs({"GT_DATASET": str(GT), "PRED_DATASET": str(pred)})
    return run(inputs, LocalStore(work)).findings.document()


def test_json_is_exactly_the_comparison(tmp_path: Path) -> None:
    weak = _half(tmp_path, keep_confident=False)
    page = tmp_path / "compare.html"
    store = str(tmp_path / "s")
    result = _cli(str(GT), str(PRED_A), str(weak), "--json", "--html", str(page), "--store", store)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert set(document) == KEYS
    assert document["better"] == "A"  # only the unsure half of A's boxes left: far more work
    d, t = document["difference"], document["time_saved_difference"]
    assert set(d) == {"score", "low", "high"} and set(t) == {"seconds", "low", "high"}
    assert d["low"] <= d["score"] <= d["high"] < 0 and t["low"] <= t["seconds"] <= t["high"] < 0
    keys = {"class", "score_a", "score_b", "difference", "boxes_a", "boxes_b", "low", "high"}
    assert all(set(row) == keys and row["boxes_a"] + row["boxes_b"] > 0 for row in document["per_class"])
    # every image is paired, so each class's difference lies in its interval; most exclude 0 here
    assert all(row["low"] <= row["difference"] <= row["high"] for row in document["per_class"])
    assert sum(row["high"] < 0 for row in document["per_class"]) >= 5
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert not list((tmp_path / "s").rglob("*.*")), "compare staged or published a report"


def test_differences_are_those_of_the_two_reports(tmp_path: Path) -> None:
    confident = _half(tmp_path, keep_confident=True)
    found = compare(str(GT), str(PRED_A), str(confident))
    a, b = _findings(tmp_path / "a", PRED_A), _findings(tmp_path / "b", confident)
    assert found.context.images == a["dataset"]["images"] == b["dataset"]["images"] == 100
    assert found.difference.score == pytest.approx(b["assistance_score"] - a["assistance_score"], abs=1e-15)
    assert found.time_saved_difference.seconds == pytest.approx(
        b["time"]["saved_seconds"] - a["time"]["saved_seconds"]
    )
    by_class = {row.class_name: row for row in found.per_class}
    for row in a["per_class"]:
        assert by_class[row["class"]].score_a == row["assistance_score"]
        assert by_class[row["class"]].boxes_a == row["counts"]["total"]
    # the page's outcome counts are each run's: the same as the two reports'
    assert (
        found.context.a.counts.model_dump() == a["counts"]
        and found.context.b.counts.model_dump() == b["counts"]
    )
    assert not found.context.same_predictions
    assert (found.context.a.best_threshold, found.context.b.best_threshold) == (
        a["recommendation"]["threshold"],
        b["recommendation"]["threshold"],
    )
    assert found.difference.low <= found.difference.score <= found.difference.high


def test_a_node_run_skips_what_only_compare_reads(tmp_path: Path) -> None:
    inputs = parse_inputs({"GT_DATASET": str(GT), "PRED_DATASET": str(PRED_A)})
    node = read_and_plan(inputs, LocalStore(tmp_path), ExecutionOptions(), ANALYSES)
    compared = read_and_plan(inputs, LocalStore(tmp_path), ExecutionOptions(), (*ANALYSES, *COMPARE_ONLY))
    assert all(set(COMPARE_ONLY).isdisjoint(task.analyses) for task in node.tasks)
    assert all(set(COMPARE_ONLY) <= set(task.analyses) for task in compared.tasks)


def test_a_set_against_itself_has_no_class_difference() -> None:
    found = compare(str(GT), str(PRED_A), str(PRED_A))
    assert found.context.same_predictions and len(found.per_class) > 10
    assert {(row.difference, row.low, row.high) for row in found.per_class} == {(0.0, 0.0, 0.0)}


def test_summary_and_user_errors(tmp_path: Path) -> None:
    store = str(tmp_path / "s")
    shown = _cli(str(GT), str(PRED_A), str(PRED_A), "--store", store)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("A and B are the same predictions")
    assert "100 images paired by asset id" in shown.stdout
    for args in (
        [str(GT), str(tmp_path / "missing.json"), str(PRED_A)],
        [str(GT), str(PRED_A), str(PRED_A), "--html", str(GT / "page.html")],  # under a file
    ):
        failed = _cli(*args, "--store", store)
        assert failed.returncode == 2 and failed.stderr.count("\n") == 1, failed.stderr
        assert failed.stderr.startswith("error: ") and "Traceback" not in failed.stderr
