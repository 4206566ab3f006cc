"""Rotated pre-labels on the way back: `prelabel-eval export` of a report on rotated boxes loads in
the tools themselves with every box turned as it was predicted.

- Label Studio: the exported tasks imported into a project made with the exported config, the
  project exported again: each region's `rotation` about its top-left corner gives the box back.
- CVAT: the XML loaded by datumaro's CVAT importer as rotated boxes (centre, size, turn).
- YOLO OBB: the folder read back by our reader (with the images' sizes beside it).
- COCO and YOLO, whose boxes have no angle, refuse it in one line naming the targets that do.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers.label_studio_server import create_project, export, import_tasks
from helpers.pre_labels import Report, stored_report
from helpers.pre_labels import export as export_pre_labels
from helpers.rotated_boxes import (
    LABELS,
    rotated_dataset,
    same_boxes,
    write_datumaro,
    write_native,
    write_sizes,
)
from label_studio_sdk import LabelStudio

from handler.cli import main
from handler.datasets import load_dataset
from handler.datasets.read_options import ReadOptions
from handler.storage import open_source

GT, PRED = rotated_dataset()
LOWEST = min(b.score or 1.0 for boxes in PRED.values() for b in boxes)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """The node on the rotated GT (CVAT, by datumaro) and predictions (native), every prediction kept."""
    folder = tmp_path_factory.mktemp("rotated")
    gt = write_datumaro(folder / "cvat", GT, "cvat")
    pred = write_native(folder, PRED)
    return stored_report(folder / "store", gt, pred, CONFIDENCE_THRESHOLD=f"{LOWEST:g}")


def _everything(report: Report, target: str, out: Path) -> Path:
    return export_pre_labels(report, target, out, "--policy", "threshold", f"{LOWEST:g}")


def test_label_studio_gives_the_rotated_pre_labels_back(
    report: Report, label_studio_client: LabelStudio, tmp_path: Path
) -> None:
    tasks_file = _everything(report, "label-studio", tmp_path / "pre-labels.json")
    tasks = json.loads(tasks_file.read_text())
    project = create_project(label_studio_client, (tmp_path / "pre-labels.xml").read_text(), "rotated back")
    assert len(import_tasks(label_studio_client, project, tasks)) == len(tasks)
    exported = tmp_path / "project-export.json"
    exported.write_bytes(export(label_studio_client, project))

    gt = load_dataset(open_source(str(write_datumaro(tmp_path / "gt", GT, "cvat"))))
    version = json.loads(exported.read_text())[0]["predictions"][0]["model_version"]
    back = load_dataset(open_source(str(exported)), None, gt, ReadOptions("pred", model_version=version))
    same_boxes(back.dataset, PRED)


def test_datumaro_loads_the_cvat_xml_as_rotated_boxes(report: Report, tmp_path: Path) -> None:
    import datumaro as dm
    from datumaro.components.annotation import RotatedBbox

    xml = _everything(report, "cvat", tmp_path / "cvat" / "default.xml")
    (xml.parent / "images").mkdir()
    for name in PRED:  # datumaro wants each image's file: empty stand-ins serve
        (xml.parent / "images" / name).write_bytes(b"")
    dataset = dm.Dataset.import_from(str(xml.parent), "cvat")

    loaded = sorted(
        (item.id, LABELS[a.label], round(a.cx, 2), round(a.cy, 2), round(a.w, 2), round(a.h, 2), a.r % 360)
        for item in dataset
        for a in item.annotations
        if isinstance(a, RotatedBbox)
    )
    boxes = [(Path(name).stem, b) for name, predicted in PRED.items() for b in predicted]
    wanted = sorted(
        (stem, b.label, round(b.cx, 2), round(b.cy, 2), round(b.w, 2), round(b.h, 2), b.angle % 360)
        for stem, b in boxes
        if b.angle % 360
    )
    assert [row[:2] for row in loaded] == [row[:2] for row in wanted]
    np.testing.assert_allclose([row[2:] for row in loaded], [row[2:] for row in wanted], atol=0.02)


def test_the_yolo_obb_folder_reads_back_as_the_predictions(report: Report, tmp_path: Path) -> None:
    folder = _everything(report, "yolo-obb", tmp_path / "labels")
    write_sizes(folder)
    back = load_dataset(open_source(str(folder)))
    assert back.dataset.format == "yolo-obb"
    same_boxes(back.dataset, PRED)


@pytest.mark.parametrize("target", ["coco", "yolo"])
def test_a_target_without_an_angle_refuses_rotated_pre_labels_in_one_line(
    report: Report, target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code = main(["export", report.report_id, "--store", str(report.store), "--to", target, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert "pre-labels are rotated boxes" in err and "--to " in err and "yolo-obb" in err
