"""No section contradicts another: each section's totals recomputed from the ledger and the findings.

Every figure of the page is built from the findings; here the findings' sections are checked against
the report's own ledger (`show --outcomes`: a row per outcome, seen here box by box: a matched pair's
row gives its GT box and its prediction), and the page's figures against the findings, on
third-party data and the shipped example.
"""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any, Final

import pytest
from helpers.paths import EXAMPLES, THIRD_PARTY

from handler.inputs import parse_inputs
from handler.pipeline import run
from handler.report.ledger import OUTCOME_FORMATS, write_outcomes
from handler.report.page.html import duration
from handler.sections.charts import CLASS_HEAD
from handler.storage.local import LocalStore

OUTCOMES: Final = ("correct", "shifted", "class_confused", "false_positive", "false_negative")
ACTIONS: Final = dict(zip(OUTCOMES, ("accept", "nudge", "relabel", "delete", "draw"), strict=True))
CASES: Final = {
    "coco": (
        THIRD_PARTY / "coco_val2014_100" / "instances_val2014_100.json",
        THIRD_PARTY / "coco_val2014_100" / "instances_val2014_fakebbox100_results.json",
    ),
    "voc": (
        THIRD_PARTY / "voc_padilla_100" / "gts" / "pascalvoc_format",
        THIRD_PARTY / "voc_padilla_100" / "dets" / "abs_xyx2y2",
    ),
    "example": (EXAMPLES / "gt.json", EXAMPLES / "predictions.jsonl"),
}


def _report(tmp_path: Path, case: str) -> tuple[dict[str, Any], list[dict[str, Any]], str]:
    gt, pred = CASES[case]
    result = run(parse_inputs({"GT_DATASET": str(gt), "PRED_DATASET": str(pred)}), LocalStore(tmp_path))
    folder = tmp_path / "reports" / result.outputs.report_id
    printed = io.BytesIO()
    write_outcomes(LocalStore(tmp_path), result.outputs.report_id, OUTCOME_FORMATS["jsonl"], printed)
    rows = [json.loads(line) for line in printed.getvalue().splitlines()]
    lines = [
        {**row, "box": side} for row in rows for side in ("gt", "pred") if row[f"{side}_index"] is not None
    ]
    findings = json.loads((folder / "findings.json").read_text(encoding="utf-8"))
    # The sketches are the page's drawing data, not findings: as the page got them.
    findings["sketches"] = [sketch.model_dump(by_alias=True) for sketch in result.page["sketch_of"].values()]
    return findings, lines, (folder / "report.html").read_text(encoding="utf-8")


def _counted(lines: list[dict[str, Any]]) -> tuple[Counter[str], Counter[tuple[str, str]], Counter[str]]:
    """Outcomes of the boxes (each GT box once, each false positive once), by class, by asset."""
    boxes = [line for line in lines if line["box"] == "gt" or line["outcome"] == "false_positive"]
    outcomes = Counter(line["outcome"] for line in boxes)
    by_class = Counter(
        (line["pred_class"] if line["outcome"] == "false_positive" else line["gt_class"], line["outcome"])
        for line in boxes
    )
    assets = Counter(line["asset_id"] for line in lines)
    return outcomes, by_class, assets


@pytest.fixture(scope="module", params=list(CASES))
def report(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return _report(tmp_path_factory.mktemp(request.param), request.param)


def test_counts_and_classes_are_the_outcome_lines(report: Any) -> None:
    findings, lines, _ = report
    outcomes, by_class, _ = _counted(lines)
    counts = findings["counts"]
    assert {key: counts[key] for key in OUTCOMES} == {key: outcomes[key] for key in OUTCOMES}
    rows = {row["class"]: row["counts"] for row in findings["per_class"]}
    assert set(rows) == {name for name, _ in by_class}, "per class lists exactly the classes with a box"
    for name, row in rows.items():
        assert {key: row[key] for key in OUTCOMES} == {key: by_class[(name, key)] for key in OUTCOMES}
    assert sum(row["total"] for row in rows.values()) == counts["total"]
    sweep = findings["confidence_sweep"]
    given = findings["parameters"]["confidence_threshold"]
    used = next(p for p in sweep["points"] if p["threshold"] == given)
    assert used["counts"] == counts and used["assistance_score"] == findings["assistance_score"]


def test_routing_time_and_work_agree_with_the_counts(report: Any) -> None:
    findings, lines, _ = report
    _, _, assets = _counted(lines)
    routing, time = findings["recommendation"], findings["time"]
    per_class = {row["class"]: row["counts"]["total"] for row in findings["per_class"]}
    routed = {row["class"]: row["boxes"] for row in routing["classes"]}
    if routing["threshold"] == findings["parameters"]["confidence_threshold"]:  # boxes at that threshold
        assert all(routed[name] == per_class.get(name, 0) for name in routed)
    saved = [point["saved_seconds"] for point in findings["confidence_sweep"]["points"]]
    assert routing["threshold_seconds_saved"] == pytest.approx(max(saved))
    if routing["kept"] is None:  # the policy is recommended: never worse than a single threshold
        assert routing["seconds_saved"] >= routing["threshold_seconds_saved"] - 1e-6
        assert routing["seconds_saved_low"] <= routing["seconds_saved"] <= routing["seconds_saved_high"]
    else:  # the threshold given is kept: what it saves
        assert routing["seconds_saved"] == pytest.approx(findings["time"]["saved_seconds"])
    costs, counts = time["costs_seconds"], findings["counts"]
    with_predictions = sum(costs[ACTIONS[key]] * counts[key] for key in OUTCOMES)
    assert time["with_predictions_seconds"] == pytest.approx(with_predictions)
    gt_boxes = sum(1 for line in lines if line["box"] == "gt")
    assert time["from_scratch_seconds"] == pytest.approx(gt_boxes * costs["draw"])
    assert gt_boxes == findings["dataset"]["gt_objects"]
    for image in findings["images_with_most_work"]:
        image_counts = image["counts"]
        assert image["labeler_seconds"] == pytest.approx(
            sum(costs[ACTIONS[key]] * image_counts[key] for key in OUTCOMES)
        )
        assert assets[image["asset_id"]] >= image_counts["total"]


def test_listed_boxes_and_sketches_are_the_lines_of_their_images(report: Any) -> None:
    findings, lines, _ = report
    suspected = findings["suspected_gt_errors"]
    flagged = Counter(line["suspected_gt_error"] for line in lines if line["box"] == "pred")
    # While another reading explains the misses, neither the findings nor the lines blame the GT.
    assert (suspected["withheld"] is not None) == (findings["other_reading"] is not None)
    assert suspected["missing_gt"] == flagged["missing_gt"]
    assert suspected["wrong_class"] == flagged["wrong_class"]
    assert suspected["count"] == suspected["missing_gt"] + suspected["wrong_class"]
    near = findings["near_misses"]
    assert len(near["listed"]) <= near["count"] and near["missed_gt"] <= findings["counts"]["false_negative"]
    listed = {row["asset_id"] for row in findings["images_with_most_work"]}
    listed |= {box["asset_id"] for box in suspected["listed"]} | {pair["asset_id"] for pair in near["listed"]}
    sketches = {sketch["asset_id"]: sketch for sketch in findings["sketches"]}
    assert set(sketches) == listed, "every listed image is sketched, and only those"
    for asset_id, sketch in sketches.items():
        on_image = [line for line in lines if line["asset_id"] == asset_id]
        if sketch["left_out"]:
            assert len(sketch["boxes"]) + sketch["left_out"] == len(on_image)
            continue
        drawn = Counter((box["side"], box["class"], box["outcome"]) for box in sketch["boxes"])
        assert drawn == Counter(
            (line["box"], line[f"{line['box']}_class"], line["outcome"]) for line in on_image
        )
    for pair in near["listed"]:
        outcomes = {
            (line["outcome"], line["gt_class"] or line["pred_class"])
            for line in lines
            if line["asset_id"] == pair["asset_id"]
        }
        assert {("false_positive", pair["class"]), ("false_negative", pair["class"])} <= outcomes


def test_the_page_figures_say_what_the_findings_say(report: Any) -> None:
    findings, _, page = report
    text = " ".join(re.sub(r"<[^>]+>", " ", page).split())
    classes = len(findings["per_class"])
    noun = "class" if classes == 1 else "classes"
    assert f"{classes} {noun} with a box, most time left first" in text
    rows = page.count("<g data-class-row>")
    assert rows == classes, "every class with a box is one row of the per-class chart (head and folded tail)"
    tail = re.search(r'data-field="class_tail">\s*<summary>(\d+) more class', page)
    assert (int(tail.group(1)) if tail else 0) == max(0, classes - CLASS_HEAD)
    time = findings["time"]
    for seconds in (time["with_predictions_seconds"], time["from_scratch_seconds"]):
        assert f">{duration(seconds)}</text>" in page, "the time bar is labelled with the findings' durations"
    score = f"{findings['assistance_score']:.2f}"
    assert f"assistance score {score}" in findings["verdict"].lower()  # after a reading: "As read, ..."
    assert "%" not in findings["verdict"].replace("95% interval", "")  # one score format
    u = findings["uncertainty"]
    assert f"between {u['score_low']:.2f} and {u['score_high']:.2f}, 19 times in 20" in text
    assert u["score_low"] <= findings["assistance_score"] <= u["score_high"]
    decisions = re.findall(r'data-field="decision">([^<]*)<', page)
    routed = {row["class"]: row for row in findings["recommendation"]["classes"]}
    assert len(decisions) == classes
    kept = findings["recommendation"]["kept"] is not None  # the threshold given, for every class
    assert sum(d == "draw" for d in decisions) == sum(
        not kept and row["class"] in routed and routed[row["class"]]["action"] == "draw"
        for row in findings["per_class"]
    )
    assert not re.search(r"\b1 (classes|images|boxes|pairs|slices)\b", text), "a plural after 1"


def test_a_crowded_dataset_keeps_the_page_light(tmp_path: Path) -> None:
    """Every listed image crowded, long class names: the sketches are capped, the page stays small."""
    from helpers.builders import annotation, asset, write_json

    names = [f"a rather long class name number {i:02d} of this crowded dataset" for i in range(40)]
    gt, pred = [], []
    for image in range(60):
        boxes = [
            (names[(image + k) % 40], 60 * (k % 30), 60 * (k // 30), 60 * (k % 30) + 40, 60 * (k // 30) + 50)
            for k in range(150)
        ]
        asset_id = f"crowded image {image:03d} with a long asset id.jpg"
        gt.append(asset(asset_id, [annotation(b) for b in boxes], width=1800, height=1000))
        # half the boxes found (shifted), a few confident boxes alone, two just below IOU_MIN on missed ones
        kept = [(n, x0 + 9, y0 + 2, x1 + 9, y1 + 2) for n, x0, y0, x1, y1 in boxes[::2]]
        invented = [(names[k], 20 + 60 * k, 950, 45 + 60 * k, 990) for k in range(image % 3)]
        near = [(n, x0 + 20, y0 + 20, x1 + 20, y1 + 20) for n, x0, y0, x1, y1 in boxes[1:4:2]]
        pred.append(
            asset(asset_id, [annotation(b, 0.95) for b in kept + invented + near], width=1800, height=1000)
        )
    raw = {
        "GT_DATASET": str(write_json(tmp_path / "gt.json", gt)),
        "PRED_DATASET": str(write_json(tmp_path / "p.json", pred)),
    }
    result = run(parse_inputs(raw), LocalStore(tmp_path / "store"))
    page = (tmp_path / "store" / "reports" / result.outputs.report_id / "report.html").read_bytes()
    findings = result.findings
    assert len(findings.suspected_gt_errors.listed) == 20 and len(findings.near_misses.listed) == 8
    sketches = result.page["sketch_of"].values()
    assert len(sketches) >= 15 and all(sketch.left_out > 0 for sketch in sketches)
    assert len(page) < 1_500_000, f"{len(page)} bytes"
