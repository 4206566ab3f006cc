"""Rotated boxes as each tool writes them, read back exactly, and scored as an independent
polygon-IoU reference scores them.

The same dataset (helpers/rotated_boxes.py) written by Label Studio's server (its JSON export:
turned about the top-left corner; its YOLO OBB export: normalised corners on images that are not
square), by datumaro (CVAT for images 1.1: turned about the centre; DOTA: pixel corners), and in
the native format (`rotation`)."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import reference as ref
from helpers.label_studio_prepared import ROTATED_EXPORTS
from helpers.node_run import run_node
from helpers.rotated_boxes import (
    LABELS,
    SIZES,
    rotated_dataset,
    same_boxes,
    write_datumaro,
    write_native,
    write_sizes,
)

from handler.datasets import Loaded, load_dataset
from handler.datasets.read_options import ReadOptions
from handler.storage import open_source

GT, PRED = rotated_dataset()


@pytest.fixture(scope="module")
def label_studio_exports(label_studio_prepared: Callable[[str], Path]) -> Path:
    return label_studio_prepared("rotated")


def _yolo_obb(label_studio_exports: Path, folder: Path) -> Path:
    """The server's YOLO OBB zip unpacked, with the sizes of its images (it ships no images)."""
    with zipfile.ZipFile(
        io.BytesIO((label_studio_exports / ROTATED_EXPORTS["yolo_obb"]).read_bytes())
    ) as zipped:
        zipped.extractall(folder)
    write_sizes(folder)
    return folder


def _read(path: Path, reference: Loaded | None = None, **options: str) -> Loaded:
    return load_dataset(
        open_source(str(path)), None, reference, ReadOptions("pred", **options) if options else ReadOptions()
    )


def test_label_studio_s_json_export_turns_each_box_about_its_top_left_corner(
    label_studio_exports: Path,
) -> None:
    export = label_studio_exports / ROTATED_EXPORTS["json"]
    gt = _read(export)
    same_boxes(gt.dataset, GT)
    same_boxes(_read(export, gt, model_version="obb").dataset, PRED)


def test_label_studio_s_yolo_obb_export_is_read_as_yolo_obb(
    label_studio_exports: Path, tmp_path: Path
) -> None:
    folder = _yolo_obb(label_studio_exports, tmp_path / "obb")
    loaded = _read(folder)
    assert loaded.dataset.format == "yolo-obb"
    same_boxes(loaded.dataset, GT)


@pytest.mark.parametrize("tool", ["cvat", "dota"])
def test_datumaro_s_files_are_read_as_written(tool: str, tmp_path: Path) -> None:
    folder = write_datumaro(tmp_path / tool, GT, tool)
    dataset = _read(folder).dataset
    assert dataset.format == tool
    same_boxes(dataset, GT)


def _reference_counts() -> dict[str, int]:
    """The spec's matching of the dataset with shapely's polygon IoU (helpers/reference.py)."""
    images = [
        ref.RefImage(
            tuple(ref.GtBox(b.xyxy, LABELS.index(b.label), b.angle) for b in GT[name]),
            tuple(ref.PredBox(p.xyxy, LABELS.index(p.label), p.score or 1.0, p.angle) for p in PRED[name]),
        )
        for name in SIZES
    ]
    return ref.evaluate(images, 0.0, 0.5, 0.8).counts


def test_each_tool_s_ground_truth_against_label_studio_s_predictions_counts_as_the_reference(
    label_studio_exports: Path, tmp_path: Path
) -> None:
    """The node on each GT file (with the Label Studio export's predictions) gives the reference's
    counts, every box read (no box skipped)."""
    want = _reference_counts()
    assert want["correct"] and want["shifted"] and want["class_confused"] and want["false_negative"]
    export = label_studio_exports / ROTATED_EXPORTS["json"]
    gts = {
        "label-studio": export,
        "cvat": write_datumaro(tmp_path / "cvat", GT, "cvat"),
        "yolo-obb": _yolo_obb(label_studio_exports, tmp_path / "obb"),
        "native": write_native(tmp_path, GT),
    }
    for name, gt in gts.items():
        store = tmp_path / f"store-{name}"
        run = run_node(
            store,
            GT_DATASET=str(gt),
            PRED_DATASET=str(export),
            PRED_MODEL_VERSION="obb",
            IOU_MIN="0.5",
            IOU_PERFECT="0.8",
            CONFIDENCE_THRESHOLD="0",
        )
        assert run.code == 0, run.err
        findings = json.loads(next(store.glob("reports/*/findings.json")).read_text())
        counts = {k: findings["counts"][k] for k in want}
        assert counts == want, name
        assert findings["skipped"]["count"] == 0, name
        rotated = sum(1 for boxes in GT.values() for b in boxes if b.angle % 360)
        total = sum(map(len, GT.values()))
        assert f"{rotated} of {total} boxes rotated (the format's)" in findings["dataset"]["gt_read_as"], name


def test_compare_tells_an_oriented_model_from_the_same_boxes_upright(tmp_path: Path) -> None:
    """B is A with every angle dropped (an upright model on turned objects): compare says A is
    better, and A's counts are the reference's."""
    from handler.comparison import compare

    gt = write_datumaro(tmp_path / "cvat", GT, "cvat")
    upright = {name: [replace(b, angle=0.0) for b in boxes] for name, boxes in PRED.items()}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, b = write_native(tmp_path / "a", PRED), write_native(tmp_path / "b", upright)
    inputs = {"CONFIDENCE_THRESHOLD": "0", "IOU_MIN": "0.5", "IOU_PERFECT": "0.8"}
    found = compare(str(gt), str(a), str(b), inputs=inputs)
    assert found.better == "A" and found.difference.high < 0
    assert found.context.a.counts.model_dump() == _reference_counts()
