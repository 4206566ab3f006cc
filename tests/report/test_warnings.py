"""Data-health warnings on real third-party files: each case raises its code, clean runs none."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import EXAMPLES, THIRD_PARTY

from handler.cli import summary
from handler.inputs import parse_inputs
from handler.pipeline import RunResult, run
from handler.report.findings import DataWarning
from handler.storage.local import LocalStore

VOC = THIRD_PARTY / "voc_padilla_100"
XML_GT = VOC / "gts" / "pascalvoc_format"
DETECTIONS = VOC / "dets" / "abs_xyx2y2"  # `cls_id score x1 y1 x2 y2`, ids index voc.names
TOY = THIRD_PARTY / "padilla_toy_7"  # `person x y w h`: corner plus size
COCO = THIRD_PARTY / "coco_val2014_100"


def _run(tmp_path: Path, gt: Path, pred: Path, **extra: str) -> RunResult:
    raw = {"GT_DATASET": str(gt), "PRED_DATASET": str(pred), **extra}
    return run(parse_inputs(raw), LocalStore(tmp_path / "store"))


def _warnings(result: RunResult) -> dict[str, DataWarning]:
    return {warning.code: warning for warning in result.findings.warnings}


def _named_detections(tmp_path: Path, keep: int | None = None) -> Path:
    """The detections with voc.names beside them (so ids become names), optionally only the first files."""
    folder = tmp_path / "dets"
    folder.mkdir()
    for file in sorted(DETECTIONS.glob("*.txt"))[:keep]:
        shutil.copy(file, folder / file.name)
    shutil.copy(VOC / "voc.names", folder / "voc.names")
    return folder


def _edited_xml(tmp_path: Path, files: int, edit: Any) -> Path:
    """A copy of the VOC XML ground truth with `edit(text)` applied to its first `files` files."""
    folder = tmp_path / "xml"
    shutil.copytree(XML_GT, folder)
    for file in sorted(folder.glob("*.xml"))[:files]:
        file.write_text(edit(file.read_text(encoding="utf-8")), encoding="utf-8")
    return folder


def test_numeric_ids_against_names_warn_and_name_the_names_file(tmp_path: Path) -> None:
    result = _run(tmp_path, XML_GT, DETECTIONS)
    # Ids against names, one to one: the re-scored class reading says it, with the mapping.
    assert "class_names_disjoint" not in _warnings(result)
    warning = _warnings(result)["other_reading"]
    assert warning.severity == "warning" and warning.figures["option"] == "PRED_CLASS_MAP"
    reading = result.findings.other_reading
    assert reading is not None and reading.class_map["14"] == "person"
    assert result.findings.assistance_score == pytest.approx(0.215, abs=5e-4)  # every GT image scored
    assert reading.score > 0.3


def test_the_names_file_the_warning_names_fixes_the_run(tmp_path: Path) -> None:
    result = _run(tmp_path, XML_GT, _named_detections(tmp_path))
    assert "class_names_disjoint" not in _warnings(result)
    assert result.findings.assistance_score > 0.3


def test_x_y_w_h_read_as_corners_warns_with_the_layout_that_fits(tmp_path: Path) -> None:
    warnings = _warnings(_run(tmp_path, TOY / "groundtruths", TOY / "detections"))
    skipped = warnings["boxes_skipped"]
    assert skipped.figures == {"skipped": 34, "boxes": 39, "reason": "x_max < x_min"}
    assert "34 of 39 boxes read (87%)" in skipped.message and "12 of 15 ground-truth boxes" in skipped.message
    layout = warnings["layout_mismatch"]
    assert '--gt-layout "class x y w h"' in layout.message
    assert '--pred-layout "class score x y w h"' in layout.message


def test_swapped_datasets_warn_that_the_ground_truth_has_confidences(tmp_path: Path) -> None:
    warning = _warnings(_run(tmp_path, DETECTIONS, XML_GT))["ground_truth_has_confidences"]
    assert warning.figures == {"gt_with_confidence": 452, "gt_boxes": 452}
    assert "look swapped" in warning.message


def test_a_partial_prediction_run_warns_about_unmatched_assets(tmp_path: Path) -> None:
    """A COCO file lists its images: one it does not list was not predicted (unlike a YOLO folder,
    whose tool writes no file for an image without detections)."""
    document = json.loads((VOC / "dets" / "coco_format" / "coco_dets.json").read_text())
    kept = {image["id"] for image in sorted(document["images"], key=lambda image: image["file_name"])[:50]}
    half = tmp_path / "half.json"
    half.write_text(
        json.dumps(
            {
                **document,
                "images": [image for image in document["images"] if image["id"] in kept],
                "annotations": [a for a in document["annotations"] if a["image_id"] in kept],
            }
        )
    )
    warnings = _warnings(_run(tmp_path, XML_GT, half))
    assert set(warnings) == {"assets_unmatched"}
    assert warnings["assets_unmatched"].figures == {
        "gt_only_images": 50,
        "pred_only_images": 0,
        "shared_images": 50,
    }


def test_resized_images_warn_about_the_size_mismatch(tmp_path: Path) -> None:
    def doubled(text: str) -> str:
        return re.sub(r"<(width|height)>(\d+)</", lambda m: f"<{m[1]}>{2 * int(m[2])}</", text)

    warnings = _warnings(_run(tmp_path, _edited_xml(tmp_path, 10, doubled), XML_GT))
    assert set(warnings) == {"image_size_mismatch", "predictions_equal_ground_truth"}
    assert warnings["image_size_mismatch"].figures == {"mismatched_images": 10, "images": 100}


def test_an_object_drawn_twice_warns_about_duplicate_ground_truth(tmp_path: Path) -> None:
    def first_object_twice(text: str) -> str:
        start, stop = text.index("<object>"), text.index("</object>") + len("</object>")
        return text[:stop] + text[start:stop] + text[stop:]

    warnings = _warnings(_run(tmp_path, _edited_xml(tmp_path, 5, first_object_twice), XML_GT))
    assert set(warnings) == {"duplicate_ground_truth"}
    assert warnings["duplicate_ground_truth"].figures == {"pairs": 5, "gt_boxes": 278}


CLEAN = {
    "native": (EXAMPLES / "gt.json", EXAMPLES / "predictions.jsonl"),
    "yolo": (VOC / "gts" / "yolo_format", VOC / "dets" / "rel_xywh"),  # read right with the names
    "cartucho": (
        THIRD_PARTY / "cartucho_mAP_85" / "input" / "ground-truth",
        THIRD_PARTY / "cartucho_mAP_85" / "input" / "detection-results",
    ),
    "voc with names": (XML_GT, None),
}


@pytest.mark.parametrize("name", CLEAN)
def test_clean_real_runs_raise_no_warning(name: str, tmp_path: Path) -> None:
    gt, pred = CLEAN[name]
    extra = (
        {"PRED_LAYOUT": "class score cx cy w h", "PRED_NAMES": str(VOC / "voc.names")}
        if name == "yolo"
        else {}
    )
    result = _run(tmp_path, gt, pred or _named_detections(tmp_path), **extra)
    assert result.findings.warnings == ()


def test_crowd_regions_are_an_info_entry_not_a_warning(tmp_path: Path) -> None:
    result = _run(
        tmp_path, COCO / "instances_val2014_100.json", COCO / "instances_val2014_fakebbox100_results.json"
    )
    assert [(w.code, w.severity, w.figures) for w in result.findings.warnings] == [
        ("masks_on_one_side", "info", {"masks": "ground truth"}),  # its polygons, against boxes
        ("crowd_excluded", "info", {"crowd_regions": 9}),
    ]


def test_masks_on_both_sides_are_scored_and_said(tmp_path: Path) -> None:
    result = _run(
        tmp_path, COCO / "instances_val2014_100.json", COCO / "instances_val2014_fakesegm100_results.json"
    )
    assert [(w.code, w.severity) for w in result.findings.warnings] == [
        ("crowd_excluded", "info"),
        ("scored_on_masks", "info"),
    ]
    assert "instance masks (the format's)" in result.findings.dataset.pred_read_as


def test_warnings_are_on_the_node_stderr_before_the_outputs_and_in_the_cli_summary(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "GT_DATASET": str(TOY / "groundtruths"),
        "PRED_DATASET": str(TOY / "detections"),
        "PRELABEL_STORE": str(tmp_path / "store"),
    }
    node = subprocess.run(
        [sys.executable, "-m", "handler"], env=env, capture_output=True, text=True, check=False
    )
    assert node.returncode == 0, node.stderr
    assert re.search(r"^warning: 34 of 39 boxes read \(87%\) were skipped", node.stderr, re.MULTILINE)
    cli = summary(_run(tmp_path, TOY / "groundtruths", TOY / "detections")).splitlines()
    assert any(line.startswith("warning: 34 of 39 boxes") for line in cli)
