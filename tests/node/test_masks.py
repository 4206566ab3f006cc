"""Scoring on masks, end to end on the real COCO val2014 pair (cocoapi's own mask results for the
same detections as its box results): the node against a reference built on pycocotools (its COCO
API turns each annotation into RLE, its `mask.iou` measures every pair) and the contract's literal
greedy (`helpers/coco_masks.py`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pycocotools.mask as coco_mask
from helpers.coco_masks import coco_pair, oracle
from helpers.node_run import one_error_line, run_node
from pycocotools.coco import COCO

from handler.engine.timecost import TimeCosts
from handler.metric import load_outcomes


def _findings(store: Path, gt: Path, pred: Path, **inputs: str) -> dict[str, Any]:
    run = run_node(store, GT_DATASET=str(gt), PRED_DATASET=str(pred), **inputs)
    assert run.code == 0, run.err[-3000:]
    report = run.outputs["REPORT_ID"]
    findings: dict[str, Any] = json.loads((store / "reports" / report / "findings.json").read_text())
    return findings


def test_the_coco_masks_score_as_pycocotools_and_the_contract_s_greedy(tmp_path: Path) -> None:
    gt, masks, _ = coco_pair()
    expected = oracle(gt, masks)
    findings = _findings(tmp_path, gt, masks)
    assert findings["counts"] == expected.counts
    assert round(float(expected.score), 2) == 0.30 and expected.grade == "Minimal assist"
    assert findings["efficiency_level"] == "Minimal assist"
    # A mask's seconds: drawing a polygon (COCO) and fixing an outline are measured, not a box's.
    time = findings["time"]
    assert time["shape"] == "masks" and not time["costs_adjusted"]
    assert (time["costs_seconds"]["draw"], time["costs_seconds"]["nudge"]) == (79.2, 26.4)
    assert set(time["cited"]) == {"draw", "nudge"}
    assert findings["assistance_score"] == float(expected.score)


def test_the_boxes_of_the_same_detections_still_score_as_before(tmp_path: Path) -> None:
    gt, _, boxes = coco_pair()
    findings = _findings(tmp_path, gt, boxes)
    assert findings["efficiency_level"] == "Partial assist"
    assert findings["time"]["shape"] == "boxes" and findings["time"]["costs_seconds"]["draw"] == 25.5
    assert round(findings["assistance_score"], 2) == 0.37


def _sketches_section(page: str) -> str:
    start = page.index('data-section-figure="sketches"')
    return page[start : page.index("</section>", start)]


def _loops(path: str) -> tuple[tuple[float, ...], ...]:
    """An SVG path's closed loops (`Mx yLx y … Z`, repeated) as their points, flat."""
    return tuple(
        tuple(float(v) for v in loop.replace("M", "").replace("L", " ").split())
        for loop in path.split("Z")
        if loop
    )


def test_a_mask_report_draws_each_object_s_outline(tmp_path: Path) -> None:
    """The sketches of a run on masks carry each drawn object's outline (a few dozen points, inside
    the object's box) and the page draws them as paths; a run on boxes draws rectangles."""
    gt, masks, boxes = coco_pair()
    findings = _findings(tmp_path / "masks", gt, masks)
    folder = tmp_path / "masks" / "reports" / findings["report_id"]
    sketched = [
        box for sketch in json.loads((folder / "sketches.json").read_text()) for box in sketch["boxes"]
    ]
    assert sketched and all(box["outline"] for box in sketched)
    for box in sketched:
        xy = np.concatenate([np.reshape(loop, (-1, 2)) for loop in box["outline"]])
        x0, y0, x1, y1 = box["box"]  # a GT's box is COCO's, over the polygon: its pixels within a pixel
        assert (xy >= (x0 - 1, y0 - 1)).all() and (xy <= (x1 + 1, y1 + 1)).all()
    page = (folder / "report.html").read_text()
    drawn = _sketches_section(page)
    assert 'class="pred correct' in drawn and '<path d="M' in drawn and "The masks, drawn" in drawn
    assert {_loops(d) for d in re.findall(r'<path d="([^"]*)"', drawn)} == {
        tuple(tuple(loop) for loop in box["outline"]) for box in sketched
    }
    on_boxes = _findings(tmp_path / "boxes", gt, boxes)
    boxes_page = (tmp_path / "boxes" / "reports" / on_boxes["report_id"] / "report.html").read_text()
    assert '<path d="M' not in _sketches_section(boxes_page)


def test_seconds_given_for_boxes_stay_on_masks() -> None:
    """Only an action at a box's default seconds takes a mask's: a team's own seconds are kept."""
    on_masks = TimeCosts(draw=30.0).on_masks()
    assert (on_masks.draw, on_masks.nudge, on_masks.accept, on_masks.shape) == (30.0, 26.4, 1.8, "masks")
    assert on_masks.defaults == TimeCosts().on_masks() != TimeCosts()


def test_score_on_chooses_boxes_or_insists_on_masks(tmp_path: Path) -> None:
    gt, masks, boxes = coco_pair()
    on_boxes = _findings(tmp_path, gt, masks, SCORE_ON="boxes")
    assert on_boxes["time"]["shape"] == "boxes"
    assert "scored_on_masks" not in [w["code"] for w in on_boxes["warnings"]]
    run = run_node(tmp_path, GT_DATASET=str(gt), PRED_DATASET=str(boxes), SCORE_ON="masks")
    line = one_error_line(run)
    assert "SCORE_ON is masks" in line and "predictions" in line and boxes.name in line


def test_the_ledger_s_iou_of_a_mask_pair_is_pycocotools_mask_iou(tmp_path: Path) -> None:
    """Each matched row of the per-box ledger carries its pair's mask IoU: the GT annotation and
    the result at the row's indices, measured by pycocotools."""
    gt, masks, _ = coco_pair()
    findings = _findings(tmp_path, gt, masks)
    rows = load_outcomes(findings["report_id"], store=str(tmp_path))
    matched = np.flatnonzero((rows["pred_index"] >= 0) & (rows["gt_index"] >= 0))
    coco = COCO(str(gt))
    annotations = json.loads(gt.read_text())["annotations"]
    results = json.loads(masks.read_text())
    oracle_iou = [
        coco_mask.iou([results[p]["segmentation"]], [coco.annToRLE(annotations[g])], [0])[0][0]
        for g, p in zip(rows["gt_index"][matched].tolist(), rows["pred_index"][matched].tolist(), strict=True)
    ]
    assert (
        len(matched)
        == findings["counts"]["correct"]
        + findings["counts"]["shifted"]
        + findings["counts"]["class_confused"]
    )
    assert np.allclose(rows["iou"][matched], oracle_iou, rtol=0, atol=1e-12)
