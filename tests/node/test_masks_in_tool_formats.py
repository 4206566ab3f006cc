"""The COCO val2014 pair on masks (GT polygons, cocoapi's RLE mask results), rendered into each
tool's format, scores as the COCO files do: 0.30, Minimal assist, the same counts.

Label Studio: one export, the GT as annotations (one-part polygons as `polygonlabels`, other
objects as brushes) and the masks as a model's brush predictions, encoded by label-studio-sdk.
CVAT: two files written by datumaro's CVAT exporter (`<polygon>`, `<mask>`). YOLO-seg: two
folders of polygons in fractions, the GT's sizes in its sizes.json, the predictions' from the GT.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.needs import existing
from helpers.node_run import run_node
from helpers.paths import THIRD_PARTY
from helpers.tool_files import ToolImage, coco_masks, label_studio_tasks, write_cvat, write_yolo_seg

PAIR = THIRD_PARTY / "coco_val2014_100"


@pytest.fixture(scope="module")
def shapes() -> tuple[list[ToolImage], list[ToolImage]]:
    existing(PAIR, "the third-party data")
    gt = json.loads((PAIR / "instances_val2014_100.json").read_text())
    results = json.loads((PAIR / "instances_val2014_fakesegm100_results.json").read_text())
    return coco_masks(gt), coco_masks(gt, results)


def findings(store: Path, gt: Path, pred: Path) -> dict[str, Any]:
    run = run_node(store, GT_DATASET=str(gt), PRED_DATASET=str(pred))
    assert run.code == 0, run.err[-3000:]
    report = run.outputs["REPORT_ID"]
    document: dict[str, Any] = json.loads((store / "reports" / report / "findings.json").read_text())
    return document


@pytest.fixture(scope="module")
def coco(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    existing(PAIR, "the third-party data")
    store = tmp_path_factory.mktemp("coco")
    return findings(
        store, PAIR / "instances_val2014_100.json", PAIR / "instances_val2014_fakesegm100_results.json"
    )


def assert_scores_as_coco(found: dict[str, Any], coco: dict[str, Any]) -> None:
    assert coco["time"]["shape"] == found["time"]["shape"] == "masks"
    assert found["counts"] == coco["counts"]
    assert found["assistance_score"] == coco["assistance_score"]
    assert round(found["assistance_score"], 2) == 0.30 and found["efficiency_level"] == "Minimal assist"
    figures = ("images", "gt_objects", "predictions")
    assert {f: found["dataset"][f] for f in figures} == {f: coco["dataset"][f] for f in figures}


def assert_read_as_shapes(found: dict[str, Any], gt_shapes: str, pred_shapes: str) -> None:
    """Each side's read-as line names what it wrote and no box convention: it wrote no box."""
    for side, shapes in (("gt", gt_shapes), ("pred", pred_shapes)):
        parts = found["dataset"][f"{side}_read_as"]
        assert not [part for part in parts if part.startswith("boxes as")], parts
        assert f"{shapes}, each box its shape's extent (the format's: it writes no box for them)" in parts


def test_a_label_studio_export_of_polygons_and_brushes(
    shapes: Any, coco: dict[str, Any], tmp_path: Path
) -> None:
    gt, predicted = shapes
    export = tmp_path / "export.json"
    export.write_text(
        json.dumps(label_studio_tasks(gt, predicted, model_version="segm", image_root="/data/upload/1/"))
    )
    found = findings(tmp_path, export, export)
    assert_scores_as_coco(found, coco)
    assert_read_as_shapes(found, "polygons and masks", "masks")


def test_cvat_files_of_polygons_and_masks(shapes: Any, coco: dict[str, Any], tmp_path: Path) -> None:
    gt, predicted = shapes
    labels = sorted({s.label for image in gt + predicted for s in image.shapes})
    gt_file, pred_file = (
        write_cvat(tmp_path / side, images, labels) for side, images in (("gt", gt), ("pred", predicted))
    )
    found = findings(tmp_path, gt_file, pred_file)
    assert_scores_as_coco(found, coco)
    assert_read_as_shapes(found, "polygons and masks", "masks")


def test_yolo_seg_folders(shapes: Any, coco: dict[str, Any], tmp_path: Path) -> None:
    gt, predicted = shapes
    labels = sorted({s.label for image in gt + predicted for s in image.shapes})
    gt_folder = write_yolo_seg(tmp_path / "gt", gt, labels)
    (gt_folder / "sizes.json").write_text(json.dumps({i.name: [i.width, i.height] for i in gt}))
    pred_folder = write_yolo_seg(tmp_path / "pred", predicted, labels)
    found = findings(tmp_path, gt_folder, pred_folder)
    assert_scores_as_coco(found, coco)
    assert_read_as_shapes(found, "polygons", "polygons")
