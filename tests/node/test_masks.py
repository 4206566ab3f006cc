"""Scoring on masks, end to end on the real COCO val2014 pair (cocoapi's own mask results for the
same detections as its box results): the node against the mask oracle (`helpers/coco_masks.py`:
pycocotools' `mask.iou` of every pair, the contract's literal greedy)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.coco_masks import oracle as coco_oracle
from helpers.needs import existing
from helpers.node_run import one_error_line, run_node
from helpers.paths import THIRD_PARTY

from handler.engine.timecost import TimeCosts


def _coco_pair() -> tuple[Path, Path, Path]:
    folder = existing(THIRD_PARTY / "coco_val2014_100", "the third-party data")
    return (
        folder / "instances_val2014_100.json",
        folder / "instances_val2014_fakesegm100_results.json",
        folder / "instances_val2014_fakebbox100_results.json",
    )


def _findings(store: Path, gt: Path, pred: Path, **inputs: str) -> dict[str, Any]:
    run = run_node(store, GT_DATASET=str(gt), PRED_DATASET=str(pred), **inputs)
    assert run.code == 0, run.err[-3000:]
    report = run.outputs["REPORT_ID"]
    findings: dict[str, Any] = json.loads((store / "reports" / report / "findings.json").read_text())
    return findings


def test_the_coco_masks_score_as_pycocotools_and_the_contract_s_greedy(tmp_path: Path) -> None:
    gt, masks, _ = _coco_pair()
    oracle = coco_oracle(json.loads(gt.read_text()), json.loads(masks.read_text()))
    findings = _findings(tmp_path, gt, masks)
    assert findings["counts"] == oracle.counts
    assert round(float(oracle.score), 2) == 0.30 and oracle.grade == "Minimal assist"
    assert findings["efficiency_level"] == "Minimal assist"
    # A mask's seconds: drawing a polygon (COCO) and fixing an outline are measured, not a box's.
    time = findings["time"]
    assert time["shape"] == "masks" and not time["costs_adjusted"]
    assert (time["costs_seconds"]["draw"], time["costs_seconds"]["nudge"]) == (79.2, 26.4)
    assert set(time["cited"]) == {"draw", "nudge"}
    assert findings["assistance_score"] == float(oracle.score)


def test_the_boxes_of_the_same_detections_still_score_as_before(tmp_path: Path) -> None:
    gt, _, boxes = _coco_pair()
    findings = _findings(tmp_path, gt, boxes)
    assert findings["efficiency_level"] == "Partial assist"
    assert findings["time"]["shape"] == "boxes" and findings["time"]["costs_seconds"]["draw"] == 25.5
    assert round(findings["assistance_score"], 2) == 0.37


def test_seconds_given_for_boxes_stay_on_masks() -> None:
    """Only an action at a box's default seconds takes a mask's: a team's own seconds are kept."""
    on_masks = TimeCosts(draw=30.0).on_masks()
    assert (on_masks.draw, on_masks.nudge, on_masks.accept, on_masks.shape) == (30.0, 26.4, 1.8, "masks")
    assert on_masks.defaults == TimeCosts().on_masks() != TimeCosts()


def test_score_on_chooses_boxes_or_insists_on_masks(tmp_path: Path) -> None:
    gt, masks, boxes = _coco_pair()
    on_boxes = _findings(tmp_path, gt, masks, SCORE_ON="boxes")
    assert on_boxes["time"]["shape"] == "boxes"
    assert "scored_on_masks" not in [w["code"] for w in on_boxes["warnings"]]
    run = run_node(tmp_path, GT_DATASET=str(gt), PRED_DATASET=str(boxes), SCORE_ON="masks")
    line = one_error_line(run)
    assert "SCORE_ON is masks" in line and "predictions" in line and boxes.name in line
