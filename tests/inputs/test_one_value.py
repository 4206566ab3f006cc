"""The inputs are parsed once into one typed value, and every part of the findings reads it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import EXAMPLES

from handler.cli import main as cli_main
from handler.cli import parse_command_line
from handler.inputs import parse_inputs
from handler.pipeline import run
from handler.storage.local import LocalStore

GT, PRED = str(EXAMPLES / "gt.json"), str(EXAMPLES / "predictions.jsonl")


def _threshold_places(findings: dict[str, Any]) -> tuple[float, float, float]:
    """The threshold used, said once (`parameters`), and where it shows: the sweep's point at it,
    whose time saved is the run's, and the recommendation's "instead of"."""
    given = findings["parameters"]["confidence_threshold"]
    at_given = [p for p in findings["confidence_sweep"]["points"] if p["threshold"] == given]
    assert len(at_given) == 1 and at_given[0]["saved_seconds"] == findings["time"]["saved_seconds"]
    says = findings["recommendation"]["says"]
    # "... than at the 0.35 given", "keep the 0.35 given, since ...", or "... as given"
    assert f"the {given:g} given" in says or "as given" in says
    return (given, at_given[0]["threshold"], findings["parameters"]["confidence_threshold"])


def test_the_cli_threshold_is_parsed_once_and_reaches_its_three_places(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [GT, PRED, "--confidence-threshold", " 0.35", "--json", "-q", "--store", str(tmp_path)]
    threshold = parse_command_line(argv).confidence_threshold
    assert (threshold.given, threshold.value, threshold.replaced) == (" 0.35", 0.35, False)
    # What the option parsed is what the inputs hold: taken as it is, not parsed again.
    assert parse_inputs(
        {"GT_DATASET": GT, "PRED_DATASET": PRED}, {"CONFIDENCE_THRESHOLD": threshold}
    ).confidence is (threshold)
    assert cli_main(argv) == 0
    findings = json.loads(capsys.readouterr().out)
    assert _threshold_places(findings) == (0.35, 0.35, 0.35)
    assert findings["parameters"]["confidence_threshold_input"] == " 0.35"
    assert findings["parameters"]["confidence_threshold_replaced"] is False


def test_a_non_numeric_threshold_is_zero_everywhere(tmp_path: Path) -> None:
    inputs = parse_inputs({"GT_DATASET": GT, "PRED_DATASET": PRED, "CONFIDENCE_THRESHOLD": "abc"})
    findings = run(inputs, LocalStore(tmp_path)).findings
    document = findings.document()
    assert _threshold_places(document) == (0, 0, 0)
    assert document["parameters"]["confidence_threshold_input"] == "abc"
    assert document["parameters"]["confidence_threshold_replaced"] is True
    assert findings.dataset.predictions_kept == findings.dataset.predictions  # 0 keeps every box
    assert [w.code for w in findings.warnings if "'abc' is not a number" in w.message] == [
        "confidence_threshold_replaced"
    ]


def test_the_threshold_of_an_inputs_file_reaches_its_three_places(tmp_path: Path) -> None:
    inputs = parse_inputs({"GT_DATASET": GT, "PRED_DATASET": PRED, "CONFIDENCE_THRESHOLD": 0.3})
    document = run(inputs, LocalStore(tmp_path)).findings.document()
    assert _threshold_places(document) == (0.3, 0.3, 0.3)
    assert document["parameters"]["confidence_threshold_input"] == "0.3"
