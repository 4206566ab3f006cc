"""The masks of the COCO val2014 pair read from its renderings in the tools' formats (Label
Studio polygons and brushes, CVAT polygons and masks, YOLO-seg) are pycocotools' own masks of
the COCO files, object by object (pycocotools is the oracle)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.label_studio_prepared import COCO_PAIR, COCO_PAIR_GT
from helpers.needs import existing
from helpers.tool_files import ToolImage, coco_masks, coco_rle, label_studio_tasks, write_cvat, write_yolo_seg
from pycocotools import mask as coco_mask

from handler.boxes import Dataset
from handler.datasets import Loaded, load_dataset
from handler.datasets.assetnames import asset_key
from handler.engine.masks import measured
from handler.storage import open_source

COCO_PAIR_MASKS = COCO_PAIR / "instances_val2014_fakesegm100_results.json"


@pytest.fixture(scope="module")
def coco_pair() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    existing(COCO_PAIR, "the third-party data")
    return json.loads(COCO_PAIR_GT.read_text()), json.loads(COCO_PAIR_MASKS.read_text())


def read(path: Path, reference: Loaded | None = None) -> Loaded:
    return load_dataset(open_source(str(path)), None, reference)


def oracle_masks(gt: dict[str, Any], entries: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each image's masks by pycocotools (its RLEs), by asset (`asset_key`), in the entries' order."""
    sizes = {i["id"]: (i["height"], i["width"], i["file_name"]) for i in gt["images"]}
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry in entries:
        height, width, name = sizes[entry["image_id"]]
        found[asset_key(name)].append(coco_rle(entry["segmentation"], height, width))
    return found


def as_coco_rle(dataset: Dataset, row: int) -> dict[str, Any]:
    masks = dataset.boxes.mask_runs[[row]]
    height, width = int(masks.height[0]), int(masks.width[0])
    rle: dict[str, Any] = coco_mask.frPyObjects(
        {"counts": masks.counts.tolist(), "size": [height, width]}, height, width
    )
    return rle


def oracle_ious(dataset: Dataset, oracle: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Each image's objects' IoU with the oracle's mask in the same place, by asset; the same
    number of objects on every image, all of them with a mask."""
    boxes = dataset.boxes
    assert boxes.has_masks and dataset.skipped_count == 0
    assert len(boxes) == sum(map(len, oracle.values()))
    order = np.argsort(boxes.image, kind="stable")
    found = {}
    for image in np.unique(boxes.image).tolist():
        rows = order[boxes.image[order] == image]
        expected = oracle[asset_key(dataset.asset_ids[image])]
        mine = [as_coco_rle(dataset, row) for row in rows.tolist()]
        found[asset_key(dataset.asset_ids[image])] = np.diag(
            coco_mask.iou(mine, expected, [0] * len(expected))
        )
    return found


def assert_masks_are_the_oracles(dataset: Dataset, oracle: dict[str, list[dict[str, Any]]]) -> None:
    ious = oracle_ious(dataset, oracle)
    assert all(np.array_equal(iou, np.ones(len(iou))) for iou in ious.values())
    pixels = sum(int(coco_mask.area(masks).sum()) for masks in oracle.values())
    assert int(measured(dataset.boxes.mask_runs).area.sum()) == pixels > 0


@pytest.fixture(scope="module")
def renderings(
    coco_pair: tuple[dict[str, Any], list[dict[str, Any]]],
) -> tuple[list[ToolImage], list[ToolImage], dict[str, Any], dict[str, Any]]:
    gt, results = coco_pair
    non_crowd = [a for a in gt["annotations"] if not a["iscrowd"]]
    return coco_masks(gt), coco_masks(gt, results), oracle_masks(gt, non_crowd), oracle_masks(gt, results)


def test_label_studio_polygons_and_brushes_are_the_coco_masks(renderings: Any, tmp_path: Path) -> None:
    gt_images, predicted, gt_oracle, pred_oracle = renderings
    tasks = label_studio_tasks(gt_images, predicted, model_version="segm", image_root="/data/upload/1/")
    export = tmp_path / "export.json"
    export.write_text(json.dumps(tasks))
    gt = read(export)
    assert_masks_are_the_oracles(gt.dataset, gt_oracle)
    assert_masks_are_the_oracles(read(export, gt).dataset, pred_oracle)


def test_cvat_polygons_and_masks_written_by_datumaro_are_the_coco_masks(
    renderings: Any, tmp_path: Path
) -> None:
    gt_images, predicted, gt_oracle, pred_oracle = renderings
    labels = sorted({s.label for image in gt_images + predicted for s in image.shapes})
    gt = read(write_cvat(tmp_path / "gt", gt_images, labels).parent)
    assert_masks_are_the_oracles(gt.dataset, gt_oracle)
    assert_masks_are_the_oracles(
        read(write_cvat(tmp_path / "pred", predicted, labels).parent, gt).dataset, pred_oracle
    )


def test_yolo_seg_polygons_written_in_fractions_are_the_coco_masks(renderings: Any, tmp_path: Path) -> None:
    """The GT's sizes in the folder's sizes.json, the predictions' taken from the GT."""
    gt_images, predicted, gt_oracle, pred_oracle = renderings
    labels = sorted({s.label for image in gt_images + predicted for s in image.shapes})
    gt_folder = write_yolo_seg(tmp_path / "gt", gt_images, labels)
    sizes = {image.name: [image.width, image.height] for image in gt_images}
    (gt_folder / "sizes.json").write_text(json.dumps(sizes))
    gt = read(gt_folder)
    assert_masks_are_the_oracles(gt.dataset, gt_oracle)
    pred = read(write_yolo_seg(tmp_path / "pred", predicted, labels), gt)
    assert_masks_are_the_oracles(pred.dataset, pred_oracle)
