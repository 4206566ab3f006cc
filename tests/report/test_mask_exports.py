"""`prelabel-eval export` of a report scored on masks (the real COCO val2014 pair: cocoapi's own
mask results against the GT's polygons): each export read back by our own readers.

Masks (COCO compressed RLE, Label Studio brushes, CVAT masks) and polygons (Label Studio and CVAT
with `--mask-shape polygon`, YOLO-seg) alike: the pre-labels the policy keeps, each mask pixel
for pixel the one the predictions file wrote, pycocotools the oracle (its IoU of the mask read
back with the file's own RLE is 1, its area the same); scored again against the GT, the run's
counts and score.
"""

from __future__ import annotations

import importlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.mask_exports import COCO, GT_FILE, KEPT, RESULTS, ious_with_the_file, masked_report
from helpers.node_run import run_node
from helpers.pre_labels import (
    Report,
    export,
    in_order,
    kept_predictions,
    paired_with_gt,
    read_label_studio,
    same_boxes,
    stored_report,
)
from pycocotools import mask as coco_mask

from handler.cli import main
from handler.datasets import PairedBoxes
from handler.datasets.loaded import Loaded
from handler.engine.npz_chunks import loaded, saved

Reader = Callable[[Path, Loaded], PairedBoxes]
# target: (file name, options, reader)
EXACT: dict[str, tuple[str, tuple[str, ...], Reader]] = {
    "coco": ("coco.json", (), paired_with_gt),
    "label-studio": ("tasks.json", (), read_label_studio),
    "cvat": ("annotations.xml", (), paired_with_gt),
    "label-studio polygons": ("tasks.json", ("--mask-shape", "polygon"), read_label_studio),
    "cvat polygons": ("annotations.xml", ("--mask-shape", "polygon"), paired_with_gt),
    "yolo-seg": ("labels", (), lambda path, reference: paired_with_gt(path, reference, "yolo-seg")),
}


@pytest.fixture(scope="module")
def masked(tmp_path_factory: pytest.TempPathFactory) -> Report:
    return masked_report(tmp_path_factory.mktemp("masks") / "store")


def _scored_again(report: Report, exported: Path, store: Path) -> dict[str, Any]:
    run = run_node(store, GT_DATASET=str(GT_FILE), PRED_DATASET=str(exported))
    assert run.code == 0, run.err[-3000:]
    findings: dict[str, Any] = json.loads(
        (store / "reports" / run.outputs["REPORT_ID"] / "findings.json").read_text()
    )
    assert findings["time"]["shape"] == "masks"
    return findings


@pytest.mark.parametrize("written", list(EXACT))
def test_the_masks_scored_come_back_pixel_for_pixel(masked: Report, written: str, tmp_path: Path) -> None:
    name, options, read = EXACT[written]
    out = export(masked, written.split()[0], tmp_path / name, *options)

    back = read(out, masked.gt())

    same_boxes(_sorted_boxes(back), _sorted_boxes(kept_predictions(masked, "recommended")))
    ious = ious_with_the_file(back, masked)
    assert len(ious) == KEPT and (ious == 1.0).all()
    again = _scored_again(masked, out, tmp_path / "store")
    assert again["counts"] == masked.findings["counts"]
    assert again["assistance_score"] == masked.findings["assistance_score"]


def _sorted_boxes(paired: PairedBoxes) -> tuple[list[tuple[str, str, float]], np.ndarray]:
    keys, order = in_order(paired)
    return keys, paired.pred.xyxy[order]


PRE_LABELS_MODULE = importlib.import_module("handler.report.exports.pre_labels")


@pytest.mark.parametrize(("target", "options"), [(t.split()[0], o) for t, (_, o, _) in EXACT.items()])
def test_masks_written_in_blocks_give_the_same_files(
    masked: Report, target: str, options: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = "labels" if target == "yolo-seg" else f"out.{'xml' if target == 'cvat' else 'json'}"
    export(masked, target, tmp_path / "whole" / name, *options)
    monkeypatch.setattr(PRE_LABELS_MODULE, "BLOCK_IMAGES", 7)
    export(masked, target, tmp_path / "by7" / name, *options)

    def files(folder: Path) -> dict[str, bytes]:
        return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}

    assert files(tmp_path / "by7") == files(tmp_path / "whole")


def test_yolo_seg_refuses_a_report_scored_on_boxes_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    boxes = stored_report(tmp_path / "store", GT_FILE, COCO / "instances_val2014_fakebbox100_results.json")
    capsys.readouterr()

    code = main(
        [
            "export",
            "latest",
            "--store",
            str(boxes.store),
            "--to",
            "yolo-seg",
            "--out",
            str(tmp_path / "labels"),
        ]
    )

    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and not (tmp_path / "labels").exists()
    assert err.startswith(f"error: report {boxes.report_id}: the run scored boxes, and YOLO-seg writes masks")


def test_a_prediction_whose_mask_is_empty_is_left_out_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A COCO result may write an empty RLE beside its `bbox`: no tool can draw it."""
    results = json.loads(RESULTS.read_text())
    height, width = results[0]["segmentation"]["size"]
    empty = coco_mask.encode(np.zeros((height, width), dtype=np.uint8, order="F"))
    segmentation = {"size": [height, width], "counts": empty["counts"].decode()}
    results[0] = {**results[0], "segmentation": segmentation, "bbox": [10, 10, 50, 50]}  # kept: its box
    pred = tmp_path / "results.json"
    pred.write_text(json.dumps(results))
    made = stored_report(tmp_path / "store", GT_FILE, pred)
    capsys.readouterr()

    out = export(made, "cvat", tmp_path / "annotations.xml")

    said = capsys.readouterr().out
    assert f"wrote {KEPT - 1} pre-labels" in said and "1 pre-label with an empty mask left out" in said
    assert len(paired_with_gt(out, made.gt()).pred) == KEPT - 1


@pytest.mark.parametrize("target", ["yolo", "yolo-obb"])
def test_a_box_target_says_the_masks_were_written_as_their_boxes(
    masked: Report, target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    export(masked, target, tmp_path / "labels")
    said = capsys.readouterr().out.splitlines()

    assert said[0].startswith(f"wrote {KEPT} pre-labels")
    assert said[1] == (
        f"the run was scored on masks: {target} takes boxes, so each pre-label was written as its "
        "mask's box (to keep the masks: --to label-studio, --to cvat, --to coco, --to yolo-seg)"
    )


def test_a_mask_target_says_nothing_of_boxes(
    masked: Report, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    export(masked, "yolo-seg", tmp_path / "labels")

    assert "scored on masks" not in capsys.readouterr().out


def test_damaged_mask_runs_are_one_error_line_naming_the_part(
    masked: Report, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store"
    shutil.copytree(masked.store, store)
    chunk = store / "reports" / masked.report_id / "pre_labels" / "00000.npz"
    columns = loaded(chunk.read_bytes())
    columns["mask_offsets"] = columns["mask_offsets"][:-1]  # one mask's runs lost
    chunk.write_bytes(saved(columns))
    capsys.readouterr()

    code = main(
        ["export", masked.report_id, "--store", str(store), "--to", "coco", "--out", str(tmp_path / "c.json")]
    )

    (line,) = capsys.readouterr().err.splitlines()
    assert code == 2 and not (tmp_path / "c.json").exists()
    assert line.startswith(f"error: report {masked.report_id!r}: its pre_labels.npz is damaged")
    assert "mask_offsets does not index" in line
