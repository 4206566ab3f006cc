"""`outcomes.jsonl`: one line per GT box and kept prediction, round-trips, and `show --outcomes`."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from helpers.builders import annotation, asset, write_json
from helpers.cases import THRESHOLDS, hand_case

from handler.boxes import BoxTable
from handler.cli import main as cli_main
from handler.engine import OUTCOMES, evaluate
from handler.engine.evaluation import Evaluation
from handler.engine.gt_errors import suspect_kinds
from handler.engine.outcome_lines import Field, Number, Text, json_lines, outcome_lines
from handler.engine.timecost import ACTIONS
from handler.report.finishers import REPORT_PARTS
from handler.report.publish import read_report_part
from handler.storage.local import LocalStore

HOSTILE = "<img src=x onerror=alert(1)>"
QUOTED = "street \"quoted\" \\ 'id' é\n.jpg"


def lines_for(evaluation: Evaluation, assets: list[str], classes: list[str]) -> list[dict[str, Any]]:
    kinds = suspect_kinds(evaluation, THRESHOLDS.iou_perfect)
    return lines_of(outcome_lines(evaluation, assets, classes, kinds))


def lines_of(data: bytes) -> list[dict[str, Any]]:
    assert data == b"" or data.endswith(b"\n")
    return [json.loads(line) for line in data.decode("utf-8").splitlines()]


def test_hand_case_lines() -> None:
    gt, pred = hand_case()
    evaluation = evaluate(gt, pred, 2, THRESHOLDS)
    lines = lines_for(evaluation, ["a.jpg", "b.jpg"], ["car", "dog", "cat"])
    assert len(lines) == len(gt) + len(evaluation.pred) == 11
    assert lines[0] == {
        "asset_id": "a.jpg",
        "box": "gt",
        "gt_index": 0,
        "pred_index": 0,
        "gt_class": "car",
        "pred_class": "car",
        "iou": 1.0,
        "confidence": 0.9,
        "outcome": "correct",
        "action": "accept",
        "suspected_gt_error": None,
    }
    assert lines[3] == {  # GT3: missed
        "asset_id": "a.jpg",
        "box": "gt",
        "gt_index": 3,
        "pred_index": None,
        "gt_class": "car",
        "pred_class": None,
        "iou": None,
        "confidence": None,
        "outcome": "false_negative",
        "action": "draw",
        "suspected_gt_error": None,
    }
    assert lines[7] == {  # P2: the dog read as a cat, seen from the prediction's side
        "asset_id": "a.jpg",
        "box": "pred",
        "gt_index": 2,
        "pred_index": 2,
        "gt_class": "dog",
        "pred_class": "cat",
        "iou": 1.0,
        "confidence": 0.7,
        "outcome": "class_confused",
        "action": "relabel",
        "suspected_gt_error": None,
    }
    assert [(line["asset_id"], line["box"]) for line in lines] == (
        [("a.jpg", "gt")] * 5 + [("a.jpg", "pred")] * 5 + [("b.jpg", "gt")]
    )
    assert lines[1]["iou"] == pytest.approx(2 / 3)


def test_indices_are_the_boxes_positions_in_their_datasets() -> None:
    gt, pred = hand_case()
    gt = gt.with_columns(source_index=np.arange(100, 106))
    pred = pred.with_columns(source_index=np.arange(200, 207))
    lines = lines_for(evaluate(gt, pred, 2, THRESHOLDS), ["a", "b"], ["car", "dog", "cat"])
    assert [line["gt_index"] for line in lines if line["box"] == "gt"] == [100, 101, 102, 103, 104, 105]
    assert [line["pred_index"] for line in lines if line["box"] == "pred"] == [200, 201, 202, 203, 204]


def _pair(line: dict[str, Any]) -> tuple[int, int, float]:
    return line["gt_index"], line["pred_index"], line["iou"]


def test_random_evaluation_round_trips() -> None:
    rng = np.random.default_rng(7)
    n_gt, n_pred, n_images = 3000, 3500, 200
    corners = rng.uniform(0, 500, (n_gt, 2))
    gt = BoxTable.build(
        np.hstack([corners, corners + rng.uniform(5, 60, (n_gt, 2))]),
        rng.integers(0, 4, n_gt),
        rng.integers(0, n_images, n_gt),
    )
    source = rng.integers(0, n_gt, n_pred)
    pred = BoxTable.build(
        gt.xyxy[source] + rng.normal(0, 4, (n_pred, 4)),
        rng.integers(0, 4, n_pred),
        gt.image[source],
        confidence=rng.uniform(0, 1, n_pred),
    )
    evaluation = evaluate(gt, pred, n_images, THRESHOLDS)
    assets = [f"{QUOTED}{i}" for i in range(n_images)]
    classes = [HOSTILE, "car", "日本", 'a "b"']
    lines = lines_for(evaluation, assets, classes)
    assert len(lines) == len(gt) + len(evaluation.pred)
    by_side = Counter((line["box"], line["outcome"]) for line in lines)
    counts = evaluation.tally.count_dict()
    for name in OUTCOMES[:3]:  # a matched pair is one line per box
        assert by_side["gt", name] == by_side["pred", name] == counts[name]
    assert by_side["pred", "false_positive"] == counts["false_positive"]
    assert by_side["gt", "false_negative"] == counts["false_negative"]
    assert {line["asset_id"] for line in lines} <= set(assets)
    assert {line["gt_class"] for line in lines} - {None} <= set(classes)
    # the two lines of a pair agree, and each IoU is the engine's, bit for bit
    pairs = {_pair(line) for line in lines if line["box"] == "gt" and line["pred_index"] is not None}
    assert pairs == {_pair(line) for line in lines if line["box"] == "pred" and line["gt_index"] is not None}
    matched = evaluation.outcomes.match.pred_iou[~np.isnan(evaluation.outcomes.match.pred_iou)]
    assert sorted(iou for _, _, iou in pairs) == sorted(matched.tolist())
    assert all(line["action"] == ACTIONS[OUTCOMES.index(line["outcome"])] for line in lines)


def test_json_lines_equals_orjson_per_record() -> None:
    fields: dict[str, Field] = {
        "name": Text(["x", HOSTILE], np.array([1, -1, 0])),
        "n": Number(np.array([3, -1, 5]), np.array([False, True, False])),
        "f": Number(np.array([0.1, np.nan, 1e-7])),
    }
    records = [
        {"name": HOSTILE, "n": 3, "f": 0.1},
        {"name": None, "n": None, "f": None},
        {"name": "x", "n": 5, "f": 1e-7},
    ]
    assert json_lines(fields, np.arange(3)) == b"".join(orjson.dumps(r) + b"\n" for r in records)
    assert (
        json_lines(fields, np.array([2, 0]))
        == orjson.dumps(records[2]) + b"\n" + orjson.dumps(records[0]) + b"\n"
    )
    assert json_lines({"n": Number(np.empty(0, dtype=np.int64))}, np.arange(0)) == b""


def test_json_lines_in_chunks_are_the_lines_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Adjacent text fields (the last one too) are one piece of a line; chunks do not show."""
    rng = np.random.default_rng(5)
    names, kinds = ["a", "b", HOSTILE], ["x", 'y "z"']
    fields: dict[str, Field] = {
        "name": Text(names, rng.integers(-1, 3, 11)),
        "n": Number(rng.integers(-5, 5, 11), rng.random(11) < 0.3),
        "first": Text(names, rng.integers(-1, 3, 11)),
        "second": Text(kinds, rng.integers(-1, 2, 11)),
    }
    order = rng.permutation(11)

    def value(field: Field, line: int) -> object:
        if isinstance(field, Text):
            return None if field.index[line] < 0 else field.values[field.index[line]]
        return None if field.null is not None and field.null[line] else field.values[line].item()

    records = [{key: value(field, line) for key, field in fields.items()} for line in order.tolist()]
    whole = json_lines(fields, order)
    assert whole == b"".join(orjson.dumps(record) + b"\n" for record in records)
    monkeypatch.setattr(sys.modules["handler.engine.outcome_lines"], "CHUNK_LINES", 4)
    assert json_lines(fields, order) == whole


def test_outcomes_part_is_a_report_part() -> None:
    assert REPORT_PARTS["outcomes"].name == "outcomes.jsonl"
    assert REPORT_PARTS["outcomes"].content_type == "application/x-ndjson"


def _run_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert cli_main([*args, "--store", str(tmp_path / "store")]) == 0
    return capsys.readouterr().out


def test_show_outcomes_and_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gt = write_json(
        tmp_path / "gt.json",
        [asset(QUOTED, [annotation((HOSTILE, 0, 0, 10, 10)), annotation(("car", 50, 50, 60, 60))])],
    )
    pred = write_json(tmp_path / "pred.json", [asset(QUOTED, [annotation((HOSTILE, 0, 0, 10, 9), 0.9)])])
    findings = json.loads(_run_cli(tmp_path, capsys, str(gt), str(pred), "--json"))
    report_id = findings["report_id"]
    lines = lines_of(_run_cli(tmp_path, capsys, "show", report_id, "--outcomes").encode("utf-8"))
    assert [(line["asset_id"], line["box"], line["gt_class"], line["outcome"]) for line in lines] == [
        (QUOTED, "gt", HOSTILE, "correct"),
        (QUOTED, "gt", "car", "false_negative"),
        (QUOTED, "pred", HOSTILE, "correct"),
    ]
    outputs = json.loads(_run_cli(tmp_path, capsys, "show", report_id, "--outputs"))
    assert outputs == {"REPORT_ID": report_id, "EFFICIENCY_LEVEL": findings["efficiency_level"]}
    assert json.loads(_run_cli(tmp_path, capsys, "show", report_id, "--json")) == findings


def test_show_outcomes_of_an_empty_report_prints_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt = write_json(tmp_path / "gt.json", [asset("a", [])])
    pred = write_json(tmp_path / "pred.json", [asset("b", [])])
    report_id = json.loads(_run_cli(tmp_path, capsys, str(gt), str(pred), "--json"))["report_id"]
    assert _run_cli(tmp_path, capsys, "show", report_id, "--outcomes") == ""
    assert read_report_part(LocalStore(tmp_path / "store"), report_id, REPORT_PARTS["outcomes"]) == b""


def test_show_takes_one_part_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli_main(["show", "rpt_x", "--html", "--outcomes"])
    assert "not allowed with argument" in capsys.readouterr().err
