"""The seed's FAQ edge cases and bad input, each through the node's own entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.builders import annotation, asset, node_env, write_json, write_jsonl
from helpers.paths import ROOT

from handler.__main__ import main

CAR = ("car", 10, 10, 50, 50)


def run_in_process(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], env: dict[str, str], store: Path
) -> tuple[int, str, str]:
    for key in ("GT_DATASET", "PRED_DATASET", "IOU_MIN", "IOU_PERFECT", "CONFIDENCE_THRESHOLD"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    code = main(["--store", str(store)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def node(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Any:
    store = tmp_path / "store"

    def run(
        gt: list[Any] | dict[str, Any], pred: list[Any] | dict[str, Any], **inputs: str
    ) -> dict[str, Any]:
        gt_path = write_json(tmp_path / "gt.json", gt)
        pred_path = write_json(tmp_path / "pred.json", pred)
        code, out, err = run_in_process(monkeypatch, capsys, node_env(gt_path, pred_path, **inputs), store)
        assert code == 0, err
        outputs = json.loads(out.strip().splitlines()[-1])
        findings: dict[str, Any] = json.loads(
            (store / "reports" / outputs["REPORT_ID"] / "findings.json").read_text()
        )
        assert findings["efficiency_level"] == outputs["EFFICIENCY_LEVEL"]
        return findings

    return run


def test_no_shared_assets_still_reports(node: Any) -> None:
    findings = node([asset("a.jpg", [annotation(CAR)])], [asset("b.jpg", [annotation(CAR, 0.9)])])
    assert findings["efficiency_level"] == "Minimal assist"
    assert findings["reason"] == "the ground-truth and prediction datasets share no image assets"
    assert findings["verdict"].startswith("Nothing could be scored")
    assert findings["dataset"]["gt_only_images"] == 1 and findings["dataset"]["pred_only_images"] == 1


def test_nothing_left_after_the_filter(node: Any) -> None:
    findings = node([asset("a", [])], [asset("a", [annotation(CAR, 0.2)])], CONFIDENCE_THRESHOLD="0.5")
    assert findings["counts"]["total"] == 0 and findings["efficiency_level"] == "Minimal assist"
    assert findings["reason"] == "no boxes were left on the shared images after the confidence filter"
    assert findings["dataset"]["predictions"] == 1 and findings["dataset"]["predictions_kept"] == 0


def test_partial_prediction_run_shrinks_the_set_and_says_so(node: Any) -> None:
    gt = [asset(f"img{i}", [annotation(CAR)]) for i in range(4)]
    findings = node(gt, [asset("img0", [annotation(CAR, 0.9)])])
    assert findings["dataset"]["images"] == 1 and findings["dataset"]["gt_only_images"] == 3
    assert findings["counts"]["correct"] == 1 and findings["counts"]["false_negative"] == 0
    assert any("3 of 4 ground-truth images" in w["message"] for w in findings["warnings"])


def test_box_without_confidence_is_kept(node: Any) -> None:
    findings = node(
        [asset("a", [annotation(CAR)])], [asset("a", [annotation(CAR)])], CONFIDENCE_THRESHOLD="1"
    )
    assert findings["counts"]["correct"] == 1 and findings["dataset"]["predictions_kept"] == 1


def test_confidence_model_tag_is_a_confidence(node: Any) -> None:
    tagged = [
        annotation(CAR, tags={"confidence-model": 0.2}),
        annotation(("car", 60, 60, 90, 90), tags=[{"name": "confidence-model", "value": 0.9}]),
    ]
    findings = node([asset("a", [])], [asset("a", tagged)], CONFIDENCE_THRESHOLD="0.5")
    assert findings["dataset"]["predictions_kept"] == 1


def test_confidence_equal_to_the_threshold_is_kept(node: Any) -> None:
    findings = node(
        [asset("a", [annotation(CAR)])], [asset("a", [annotation(CAR, 0.5)])], CONFIDENCE_THRESHOLD="0.5"
    )
    assert findings["counts"]["correct"] == 1


def test_non_numeric_threshold_is_zero_and_reported(node: Any) -> None:
    findings = node([asset("a", [])], [asset("a", [annotation(CAR, 0.01)])], CONFIDENCE_THRESHOLD="abc")
    assert findings["parameters"]["confidence_threshold"] == 0
    assert findings["parameters"]["confidence_threshold_replaced"] is True
    assert findings["parameters"]["confidence_threshold_input"] == "abc"
    assert findings["counts"]["false_positive"] == 1
    assert any("'abc' is not a number" in w["message"] for w in findings["warnings"])


def test_a_decimal_comma_threshold_is_read_as_a_point_and_said(
    node: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """`0,5` is 0.5 (the grade does not flip to "every box kept"), said on stderr and in the findings."""
    pred = [asset("a", [annotation(CAR, 0.9), annotation(("car", 60, 60, 90, 90), 0.1)])]
    findings = node([asset("a", [annotation(CAR)])], pred, CONFIDENCE_THRESHOLD="0,5", IOU_MIN="0,3")
    assert findings["parameters"]["confidence_threshold"] == 0.5 and findings["parameters"]["iou_min"] == 0.3
    assert findings["parameters"]["confidence_threshold_replaced"] is False
    assert findings["counts"]["false_positive"] == 0  # the 0.1 box is below 0.5
    (said,) = [w for w in findings["warnings"] if w["code"] == "decimal_comma"]
    assert said["severity"] == "info" and "CONFIDENCE_THRESHOLD '0,5' as 0.5" in said["message"]


def test_wrong_class_on_a_good_box_is_class_confused(node: Any) -> None:
    findings = node(
        [asset("a", [annotation(CAR)])], [asset("a", [annotation(("truck", 10, 10, 50, 50), 0.9)])]
    )
    counts = findings["counts"]
    assert (counts["class_confused"], counts["false_positive"], counts["false_negative"]) == (1, 0, 0)
    assert findings["assistance_score"] == 0.5


def test_per_box_defects_are_skipped_counted_and_listed(node: Any) -> None:
    pred = [
        asset(
            "a",
            [
                annotation(CAR, 0.9),
                annotation(("car", 50, 10, 10, 50), 0.9),
                {"label": "car", "x_min": "NaN", "y_min": 1, "x_max": 2, "y_max": 3},
                {"x_min": 1, "y_min": 1, "x_max": 2, "y_max": 3},
            ],
        )
    ]
    findings = node([asset("a", [annotation(CAR)])], pred)
    assert findings["counts"]["correct"] == 1 and findings["skipped"]["count"] == 3
    problems = [(s["position"], s["problem"]) for s in findings["skipped"]["listed"]]
    assert ("assets[0].annotations[1]", "x_max < x_min") in problems
    assert ("assets[0].annotations[2]", "'NaN' is not of type 'number'") in problems
    assert ("assets[0].annotations[3]", "'label' is a required property") in problems


BAD_INPUTS = [
    ("missing.json", None, "missing.json: no such file or folder"),
    ("gt.json", b'{"assets": [', "gt.json: line 1 column 13: expected valid JSON"),
    ("gt.json", b'{"images": 3, "annotations": []}', "gt.json: `images`: expected a list of objects"),
    ("gt.json", b'"hello"', "gt.json: unknown dataset format; tried coco, coco-results, native"),
    (
        "gt.json",
        b'{"assets": [{"annotations": []}]}',
        "gt.json: assets[0]: 'asset_id' is a required property",
    ),
    ("gt.jsonl", b'{"asset_id": "a"}\n{"asset_id": \n', "gt.jsonl: line 2 column"),
    ("gt.jsonl", b"", "gt.jsonl: no records: expected JSON Lines, one record a line"),
    ("gt.jsonl", b"\n  \n", "gt.jsonl: no records: expected JSON Lines, one record a line"),
]


@pytest.mark.parametrize(("name", "content", "message"), BAD_INPUTS)
def test_bad_input_is_one_clear_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    name: str,
    content: bytes | None,
    message: str,
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    pred = write_json(tmp_path / "pred.json", [asset("a", [])])
    code, out, err = run_in_process(monkeypatch, capsys, node_env(path, pred), tmp_path / "store")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err, err
    assert not (tmp_path / "store" / "reports").exists()


def test_normalised_against_pixels_without_sizes_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    gt = write_json(tmp_path / "gt.json", [asset("a", [annotation(CAR)])])
    pred = write_jsonl(
        tmp_path / "pred.jsonl",
        [{"asset_id": "a", "annotations": [annotation(("car", 0.1, 0.1, 0.5, 0.5), 0.9, normalized=True)]}],
    )
    gt.write_text(json.dumps([{"asset_id": "a", "annotations": [annotation(CAR)]}]))
    code, _, err = run_in_process(monkeypatch, capsys, node_env(gt, pred), tmp_path / "store")
    assert code == 2
    assert "pred.jsonl: asset 'a' has normalised coordinates but no image width/height" in err


def test_normalised_boxes_meet_pixels_through_image_sizes(node: Any) -> None:
    pred = [{"asset_id": "a", "annotations": [annotation(("car", 0.1, 0.1, 0.5, 0.5), 0.9, normalized=True)]}]
    findings = node([asset("a", [annotation(CAR)], width=100, height=100)], pred)
    assert findings["counts"]["correct"] == 1 and findings["mean_iou"] == 1.0


def test_same_name_with_two_extensions_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    gt = write_json(tmp_path / "gt.json", [asset("a.jpg", []), asset("a.png", [])])
    pred = write_json(tmp_path / "pred.json", [asset("a", [])])
    code, _, err = run_in_process(monkeypatch, capsys, node_env(gt, pred), tmp_path / "store")
    assert code == 2 and "assets 'a.jpg' and 'a.png' have the same name without extension" in err


# A class name holding CR LF (and an escape sequence): quoted in an error or a warning, it is escaped.
CRLF_CLASS = "car\r\nbus\x1b[2J"
ENTRY_POINTS = {"node": ["-m", "handler"], "cli": ["-m", "handler.cli"]}


def _through(entry: str, gt: Path, pred: Path, store: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **node_env(gt, pred), "PYTHONPATH": str(ROOT), "PRELABEL_STORE": str(store)}
    arguments = [str(gt), str(pred)] if entry == "cli" else []
    command = [sys.executable, *ENTRY_POINTS[entry], *arguments]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_control_characters_in_an_error_are_escaped(tmp_path: Path, entry: str) -> None:
    gt = write_json(tmp_path / "gt.json", [asset("a", [annotation((CRLF_CLASS, 1, 1, 20, 20))])])
    # A prediction cache with 3 probabilities for the GT's 1 class: the error lists the classes.
    boxes = [{"x_min": 0.01, "x_max": 0.2, "y_min": 0.01, "y_max": 0.2, "probabilities": [0.1, 0.2, 0.7]}]
    pred = write_json(tmp_path / "cache.json", [{"predicted_bounding_boxes": boxes}])
    answer = _through(entry, gt, pred, tmp_path / "store")
    assert answer.returncode == 2 and answer.stderr.count("\n") == 1 and "\r" not in answer.stderr
    assert "has 1 classes (car\\r\\nbus\\x1b[2J)" in answer.stderr


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_control_characters_in_a_warning_are_escaped(tmp_path: Path, entry: str) -> None:
    gt = write_json(tmp_path / "gt.json", [asset("a", [annotation((CRLF_CLASS, 1, 1, 20, 20))])])
    pred = write_json(tmp_path / "pred.json", [asset("a", [annotation(("truck", 1, 1, 20, 20), 0.9)])])
    answer = _through(entry, gt, pred, tmp_path / "store")
    shown = answer.stderr if entry == "node" else answer.stdout
    warnings = [line for line in shown.splitlines() if line.startswith("warning: ")]
    assert answer.returncode == 0 and len(warnings) == 1 and "\r" not in shown and "\x1b" not in shown
    assert "classes like car\\r\\nbus\\x1b[2J and the predictions like truck" in warnings[0]
