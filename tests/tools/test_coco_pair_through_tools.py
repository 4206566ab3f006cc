"""Done-when of issue 28: the shared COCO val2014 pair, carried through each labeling tool's own
files, gives the counts of the COCO files themselves.

Label Studio: the pair becomes tasks (GT as annotations, detections as predictions), imported
into the real server and exported through its export API; that one export is both sides.
CVAT: datumaro writes the GT and the detections as two CVAT for images 1.1 files (coordinates
rounded to 0.01 px, as its exporter writes them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.label_studio_server import create_project, export, import_tasks, rectangle_config
from helpers.node_run import run_node
from helpers.paths import THIRD_PARTY
from helpers.tool_files import coco_images, label_studio_tasks, write_cvat
from label_studio_sdk import LabelStudio

PAIR = THIRD_PARTY / "coco_val2014_100"
GT_FILE = PAIR / "instances_val2014_100.json"
RESULTS_FILE = PAIR / "instances_val2014_fakebbox100_results.json"
INPUTS = {"CONFIDENCE_THRESHOLD": "0", "IOU_MIN": "0.5"}


@pytest.fixture(scope="module")
def coco_pair() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    if not PAIR.exists():
        pytest.skip(f"third-party data not found at {PAIR}")
    return json.loads(GT_FILE.read_text()), json.loads(RESULTS_FILE.read_text())


def findings(store: Path, gt: Path, pred: Path) -> dict[str, Any]:
    run = run_node(store, GT_DATASET=str(gt), PRED_DATASET=str(pred), **INPUTS)
    assert run.code == 0, run.err
    report_id = run.outputs["REPORT_ID"]
    document: dict[str, Any] = json.loads((store / "reports" / report_id / "findings.json").read_text())
    return document


@pytest.fixture(scope="module")
def coco_findings(
    coco_pair: tuple[dict[str, Any], list[dict[str, Any]]], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    return findings(tmp_path_factory.mktemp("coco-store"), GT_FILE, RESULTS_FILE)


def same_counts(found: dict[str, Any], coco: dict[str, Any]) -> None:
    figures = ("images", "gt_objects", "predictions", "gt_only_images", "pred_only_images")
    assert {f: found["dataset"][f] for f in figures} == {f: coco["dataset"][f] for f in figures}
    assert found["counts"] == coco["counts"]
    # the tools' files hold no crowd regions: they were left out when the files were made
    assert coco["dataset"]["crowd_excluded"] == 9 and found["dataset"]["crowd_excluded"] == 0


def test_a_label_studio_export_of_the_pair_counts_as_the_coco_files(
    coco_pair: tuple[dict[str, Any], list[dict[str, Any]]],
    coco_findings: dict[str, Any],
    label_studio_client: LabelStudio,
    tmp_path: Path,
) -> None:
    gt, results = coco_pair
    tasks = label_studio_tasks(
        coco_images(gt),
        coco_images(gt, results),
        model_version="fakebbox100",
        image_root="http://images.cocodataset.org/val2014/",
    )
    project = create_project(label_studio_client, rectangle_config([c["name"] for c in gt["categories"]]))
    assert len(import_tasks(label_studio_client, project, tasks)) == 100
    exported = tmp_path / "project-export.json"
    exported.write_bytes(export(label_studio_client, project))

    found = findings(tmp_path / "store", exported, exported)

    assert (
        found["dataset"]["gt_format"] == "label-studio" and found["dataset"]["pred_format"] == "label-studio"
    )
    same_counts(found, coco_findings)


def test_cvat_files_of_the_pair_written_by_datumaro_count_as_the_coco_files(
    coco_pair: tuple[dict[str, Any], list[dict[str, Any]]], coco_findings: dict[str, Any], tmp_path: Path
) -> None:
    gt, results = coco_pair
    labels = [c["name"] for c in gt["categories"]]
    gt_xml = write_cvat(tmp_path / "gt", coco_images(gt), labels)
    pred_xml = write_cvat(tmp_path / "pred", coco_images(gt, results), labels)

    found = findings(tmp_path / "store", gt_xml, pred_xml)

    assert found["dataset"]["gt_format"] == "cvat" and found["dataset"]["pred_format"] == "cvat"
    same_counts(found, coco_findings)
