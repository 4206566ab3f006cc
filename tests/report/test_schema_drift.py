"""schemas/findings.schema.json is generated from the Findings model, and real runs match it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest
from helpers.findings_schema import validate_document
from helpers.paths import EXAMPLES, ROOT, THIRD_PARTY

from handler.engine import GRADES
from handler.features.work.partial import SIZE_NAMES
from handler.inputs import parse_inputs
from handler.pipeline import run
from handler.report.findings.schema import SCHEMA_FILE, schema_text
from handler.report.finishers import REPORT_PARTS
from handler.report.publish.asset import read_report_part
from handler.sections.fields import Grade, SizeName
from handler.storage.local import LocalStore

VOC = THIRD_PARTY / "voc_padilla_100"
COCO = THIRD_PARTY / "coco_val2014_100"
# (GT, predictions, the formats they are read as); together they cover every format.
RUNS = {
    "native": (EXAMPLES / "gt.json", EXAMPLES / "predictions.jsonl", ("native", "native-jsonl")),
    "coco": (
        COCO / "instances_val2014_100.json",
        COCO / "instances_val2014_fakebbox100_results.json",
        ("coco", "coco-results"),
    ),
    "coco masks": (
        COCO / "instances_val2014_100.json",
        COCO / "instances_val2014_fakesegm100_results.json",
        ("coco", "coco-results"),
    ),
    "yolo": (VOC / "gts" / "yolo_format", VOC / "dets" / "rel_xywh", ("yolo", "yolo")),
    "voc": (VOC / "gts" / "pascalvoc_format", VOC / "dets" / "abs_xyx2y2", ("voc", "cartucho")),
}


def test_the_checked_in_schema_is_the_generated_one() -> None:
    checked_in = (ROOT / SCHEMA_FILE).read_text(encoding="utf-8")
    assert checked_in == schema_text(), (
        f"{SCHEMA_FILE} differs from the Findings model: "
        "run `python -m handler.report.findings.schema --write`"
    )


def test_the_model_literals_are_the_engine_names() -> None:
    assert get_args(Grade) == tuple(name for name, _, _ in GRADES)
    assert get_args(SizeName) == SIZE_NAMES


def _stored_findings(store: LocalStore, gt: Path, pred: Path) -> dict[str, Any]:
    result = run(parse_inputs({"GT_DATASET": str(gt), "PRED_DATASET": str(pred)}), store)
    document: dict[str, Any] = json.loads(
        read_report_part(store, result.outputs.report_id, REPORT_PARTS["findings"])
    )
    return document


@pytest.mark.parametrize("name", RUNS)
def test_findings_of_real_runs_match_the_checked_in_schema(name: str, tmp_path: Path) -> None:
    gt, pred, formats = RUNS[name]
    findings = _stored_findings(LocalStore(tmp_path), gt, pred)
    validate_document(findings)
    assert (findings["dataset"]["gt_read_as"][0], findings["dataset"]["pred_read_as"][0]) == formats
    assert findings["counts"]["total"] > 0


def _prediction_cache(path: Path) -> Path:
    """examples/predictions.jsonl as a prediction cache: one entry per GT asset, in the GT's order,
    normalised boxes with one-hot probabilities over the GT's class names in sorted order."""
    gt = json.loads((EXAMPLES / "gt.json").read_text())["assets"]
    classes = sorted({box["label"] for asset in gt for box in asset["annotations"]})
    lines = (EXAMPLES / "predictions.jsonl").read_text().splitlines()
    predicted = {entry["asset_id"]: entry for entry in map(json.loads, lines)}

    def cached(box: dict[str, Any], width: float, height: float) -> dict[str, Any]:
        probabilities = [0.0] * len(classes)
        probabilities[classes.index(box["label"])] = box.get("confidence", 1.0)
        corners = {key: box[key] / width for key in ("x_min", "x_max")}
        corners |= {key: box[key] / height for key in ("y_min", "y_max")}
        return {**corners, "probabilities": probabilities}

    entries = []
    for asset in gt:
        pred = predicted.get(asset["asset_id"], {"annotations": []})
        boxes = [b for b in pred["annotations"] if b["label"] in classes]
        cached_boxes = [cached(b, asset["width"], asset["height"]) for b in boxes]
        entries.append({"predicted_bounding_boxes": cached_boxes})
    path.write_text(json.dumps(entries))
    return path


def test_findings_of_a_prediction_cache_match_the_checked_in_schema(tmp_path: Path) -> None:
    cache = _prediction_cache(tmp_path / "cache.json")
    findings = _stored_findings(LocalStore(tmp_path / "store"), EXAMPLES / "gt.json", cache)
    validate_document(findings)
    assert findings["dataset"]["pred_read_as"][0] == "prediction-cache" and findings["counts"]["correct"] > 0
