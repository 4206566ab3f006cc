"""Mask pre-labels on the way back: `prelabel-eval export` of a report scored on masks (the COCO
val2014 pair) loads in the tools themselves with every mask as it was scored.

- Label Studio: the tasks (brushes, or polygons) imported into a project made with the
  exported config (every fourth image's), the project exported again through the export API and
  read back by our reader: the same masks as the tasks sent, pixel for pixel, and scored again,
  their counts (a polygon is its mask's exact boundary).
- CVAT and COCO: the files loaded by datumaro's importers (CVAT's own dataset library): each
  mask, pixel for pixel, the one the results file wrote (decoded by pycocotools); each CVAT
  polygon (`--mask-shape polygon`) rasterised by pycocotools, pixel for pixel that mask too (a
  polygon is its mask's exact boundary).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.label_studio_server import create_project, export, import_tasks
from helpers.mask_exports import KEPT, coco_rle, masked_report, results_segmentation, source_rows
from helpers.node_run import run_node
from helpers.pre_labels import Report, in_order, read_label_studio
from helpers.pre_labels import export as export_pre_labels
from label_studio_sdk import LabelStudio
from pycocotools import mask as coco_mask

from handler.engine.masks import made


@pytest.fixture(scope="module")
def masked(tmp_path_factory: pytest.TempPathFactory) -> Report:
    return masked_report(tmp_path_factory.mktemp("masks") / "store")


# Every fourth image's task goes to the server: each mask makes the same round trip, and the import
# and export of the other three quarters would prove nothing more (the exporter's every mask is
# checked against the results file in tests/report/test_mask_exports.py).
SENT_EVERY = 4


@pytest.mark.parametrize("shape", ["mask", "polygon"])
def test_label_studio_gives_the_mask_pre_labels_back_as_sent(
    masked: Report, shape: str, label_studio_client: LabelStudio, tmp_path: Path
) -> None:
    written = export_pre_labels(masked, "label-studio", tmp_path / "pre-labels.json", "--mask-shape", shape)
    tasks = json.loads(written.read_text())[::SENT_EVERY]
    sent = tmp_path / "sent.json"
    sent.write_text(json.dumps(tasks))
    project = create_project(label_studio_client, (tmp_path / "pre-labels.xml").read_text(), f"masks {shape}")
    assert len(import_tasks(label_studio_client, project, tasks)) == len(tasks)
    exported = tmp_path / "project-export.json"
    exported.write_bytes(export(label_studio_client, project))

    back, before = read_label_studio(exported, masked.gt()), read_label_studio(sent, masked.gt())

    (back_keys, back_order), (sent_keys, sent_order) = in_order(back), in_order(before)
    assert back_keys == sent_keys and len(sent_keys) > KEPT // (2 * SENT_EVERY)  # a good part of them
    assert back.pred.masks is not None and before.pred.masks is not None
    back_masks, sent_masks = made(back.pred.masks), made(before.pred.masks)
    for back_row, sent_row in zip(back_order, sent_order, strict=True):
        assert (
            coco_mask.iou([coco_rle(back_masks, back_row)], [coco_rle(sent_masks, sent_row)], [0])[0][0]
            == 1.0
        )
    assert _counts(masked, exported, tmp_path / "back") == _counts(masked, sent, tmp_path / "sent")


def _counts(masked: Report, predictions: Path, store: Path) -> Any:
    """The counts of `predictions` scored against the report's GT."""
    run = run_node(store, GT_DATASET=str(masked.gt_file), PRED_DATASET=str(predictions))
    assert run.code == 0, run.err[-3000:]
    return json.loads((store / "reports" / run.outputs["REPORT_ID"] / "findings.json").read_text())["counts"]


# An annotation datumaro loaded as the bitmap of its image's (height, width).
Bitmap = Callable[[Any, tuple[int, int]], Any]


def _mask_bitmap(annotation: Any, _size: tuple[int, int]) -> Any:
    return annotation.image.astype(bool)


def _polygon_bitmap(annotation: Any, size: tuple[int, int]) -> Any:
    """The polygon rasterised by pycocotools."""
    polygon = coco_mask.frPyObjects([[float(v) for v in annotation.points]], *size)
    return coco_mask.decode(coco_mask.merge(polygon)).astype(bool)


def _datumaro_shapes(dataset: Any, kind: str = "mask") -> tuple[list[tuple[str, str, float]], list[Any]]:
    """(image stem, class, score) and every annotation of `kind` datumaro loaded, sorted as
    `in_order` sorts pre-labels (by key, then box). Its COCO importer gives each annotation's
    `bbox` as a box of its own too: those are left out."""
    import datumaro as dm

    labels = dataset.categories()[dm.AnnotationType.label]
    rows = [
        ((item.id, labels[a.label].name, round(float(a.attributes["score"]), 6)), a)
        for item in dataset
        for a in item.annotations
        if a.type == dm.AnnotationType[kind]
    ]
    boxes = [np.round(np.array(a.get_bbox(), dtype=float), 1).tolist() for _, a in rows]
    order = sorted(range(len(rows)), key=lambda i: (rows[i][0], *boxes[i]))
    return [rows[i][0] for i in order], [rows[i][1] for i in order]


def _same_as_the_results_file(
    masked: Report, found: tuple[list[tuple[str, str, float]], list[Any]], bitmap: Bitmap = _mask_bitmap
) -> None:
    keys, sources = source_rows(masked)
    assert found[0] == [(Path(asset).stem, name, score) for asset, name, score in keys]
    segmentation = results_segmentation()
    for annotation, source in zip(found[1], sources, strict=True):
        expected = coco_mask.decode(segmentation[source]).astype(bool)
        assert np.array_equal(bitmap(annotation, expected.shape), expected)


@pytest.mark.parametrize(("shape", "bitmap"), [("mask", _mask_bitmap), ("polygon", _polygon_bitmap)])
def test_datumaro_loads_the_cvat_shapes_pixel_for_pixel(
    masked: Report, shape: str, bitmap: Bitmap, tmp_path: Path
) -> None:
    import datumaro as dm

    folder = tmp_path / "cvat"
    xml = export_pre_labels(masked, "cvat", folder / "default.xml", "--mask-shape", shape)
    (folder / "images").mkdir()
    for asset in masked.gt().dataset.asset_ids:  # datumaro wants each image's file: empty stand-ins
        (folder / "images" / asset).write_bytes(b"")

    dataset = dm.Dataset.import_from(str(xml.parent), "cvat")

    _same_as_the_results_file(masked, _datumaro_shapes(dataset, shape), bitmap)


def test_datumaro_loads_the_coco_rle_pixel_for_pixel(masked: Report, tmp_path: Path) -> None:
    import datumaro as dm

    folder = tmp_path / "coco"
    coco = export_pre_labels(masked, "coco", folder / "annotations" / "instances_default.json")
    (folder / "images" / "default").mkdir(parents=True)

    dataset = dm.Dataset.import_from(str(coco), "coco_instances")

    _same_as_the_results_file(masked, _datumaro_shapes(dataset))
