"""Suspected GT errors on real COCO boxes: a strong detector (predictions = GT, confidence 0.95)
against a GT with boxes deleted and classes changed finds exactly those boxes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from helpers.paths import THIRD_PARTY

from handler.inputs import parse_inputs
from handler.metric import load_outcomes
from handler.pipeline import run
from handler.report.finishers import REPORT_PARTS
from handler.report.publish.asset import read_report_part
from handler.storage.local import LocalStore

COCO = THIRD_PARTY / "coco_val2014_100" / "instances_val2014_100.json"


def _xyxy(bbox: list[float]) -> np.ndarray:
    x, y, w, h = bbox
    return np.array([x, y, x + w, y + h])


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
    return float(w * h / union) if union else 0.0


def _isolated(kept: list[dict[str, Any]], box: dict[str, Any]) -> bool:
    """No remaining GT box of the image overlaps it with IoU >= 0.1."""
    mine = _xyxy(box["bbox"])
    return all(_iou(mine, _xyxy(o["bbox"])) < 0.1 for o in kept if o["image_id"] == box["image_id"])


def test_deleted_and_relabeled_gt_boxes_are_found(tmp_path: Path) -> None:
    document = json.loads(COCO.read_text(encoding="utf-8"))
    objects = [a for a in document["annotations"] if not a.get("iscrowd")]
    predictions = [
        {"image_id": a["image_id"], "category_id": a["category_id"], "bbox": a["bbox"], "score": 0.95}
        for a in objects
    ]
    deleted, relabeled = objects[::25], objects[7::40]
    gone = {id(a) for a in deleted}
    other = {c["id"] for c in document["categories"]}
    kept = []
    for a in document["annotations"]:
        if id(a) in gone:
            continue
        if any(a is r for r in relabeled):
            a = {**a, "category_id": min(other - {a["category_id"]})}
        kept.append(a)
    expected_missing = sum(_isolated(kept, a) for a in deleted)
    assert expected_missing >= 0.5 * len(deleted)  # most deleted boxes stand alone
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps({**document, "annotations": kept}), encoding="utf-8")
    pred = tmp_path / "pred.json"
    pred.write_text(json.dumps(predictions), encoding="utf-8")
    store = LocalStore(tmp_path / "store")
    result = run(parse_inputs({"GT_DATASET": str(gt), "PRED_DATASET": str(pred)}), store)

    found = result.findings.suspected_gt_errors
    assert (found.missing_gt, found.wrong_class) == (expected_missing, len(relabeled))
    confidences = [box.confidence for box in found.listed]
    assert confidences == sorted(confidences, reverse=True) and len(found.listed) == 20
    rows = load_outcomes(result.outputs.report_id, store=store)
    flagged = rows["suspected_gt_error"] != None  # noqa: E711 (an object array: elementwise)
    by_kind = {
        kind: int(np.sum(rows["suspected_gt_error"] == kind)) for kind in ("missing_gt", "wrong_class")
    }
    # a row per outcome: a wrong-class pair is one row, a missing GT a false positive's row
    assert by_kind == {"missing_gt": expected_missing, "wrong_class": len(relabeled)}
    assert set(rows["outcome"][flagged].tolist()) <= {"false_positive", "class_confused"}
    routing = json.loads(read_report_part(store, result.outputs.report_id, REPORT_PARTS["routing"]))
    recommended = result.findings.recommendation
    assert {row.class_name for row in recommended.classes} <= set(routing)
    assert all(threshold == recommended.threshold_for(name) for name, threshold in routing.items())
