"""The COCO val2014 pair, carried through each labeling tool's own
files, gives the counts of the COCO files themselves.

Label Studio: the pair becomes tasks (GT as annotations, detections as predictions), imported
into the real server and exported through its export API; that one export is both sides.
CVAT: datumaro writes the GT and the detections as two CVAT for images 1.1 files (coordinates
rounded to 0.01 px, as its exporter writes them).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.label_studio_prepared import COCO_PAIR, COCO_PAIR_EXPORT, COCO_PAIR_GT, COCO_PAIR_RESULTS
from helpers.needs import existing
from helpers.node_run import run_node
from helpers.tool_files import coco_images, write_cvat

INPUTS = {"CONFIDENCE_THRESHOLD": "0", "IOU_MIN": "0.5"}


@pytest.fixture(scope="module")
def coco_pair() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    existing(COCO_PAIR, "the third-party data")
    return json.loads(COCO_PAIR_GT.read_text()), json.loads(COCO_PAIR_RESULTS.read_text())


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
    return findings(tmp_path_factory.mktemp("coco-store"), COCO_PAIR_GT, COCO_PAIR_RESULTS)


def same_counts(found: dict[str, Any], coco: dict[str, Any]) -> None:
    figures = ("images", "gt_objects", "predictions", "gt_only_images", "pred_only_images")
    assert {f: found["dataset"][f] for f in figures} == {f: coco["dataset"][f] for f in figures}
    assert found["counts"] == coco["counts"]
    # the tools' files hold no crowd regions: they were left out when the files were made
    assert coco["dataset"]["crowd_excluded"] == 9 and found["dataset"]["crowd_excluded"] == 0


def test_a_label_studio_export_of_the_pair_counts_as_the_coco_files(
    coco_findings: dict[str, Any], label_studio_prepared: Callable[[str], Path], tmp_path: Path
) -> None:
    # the pair's project, made and exported by helpers/label_studio_prepared.py (`coco-pair`)
    exported = label_studio_prepared("coco-pair") / COCO_PAIR_EXPORT

    found = findings(tmp_path / "store", exported, exported)

    assert (
        found["dataset"]["gt_read_as"][0] == "label-studio"
        and found["dataset"]["pred_read_as"][0] == "label-studio"
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

    assert found["dataset"]["gt_read_as"][0] == "cvat" and found["dataset"]["pred_read_as"][0] == "cvat"
    same_counts(found, coco_findings)
