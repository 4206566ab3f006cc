"""How a reader hands masks to `build_dataset`: a `MaskRuns` column aligned with its `ParsedRows`,
kept, skipped and left out (crowds) with the boxes it goes with."""

from __future__ import annotations

import json

import numpy as np
import pycocotools.mask as coco_mask
from helpers.label_studio_prepared import COCO_PAIR, COCO_PAIR_GT, COCO_PAIR_RESULTS
from helpers.needs import existing

from handler.boxes import Images, MaskRuns, ParsedRows, UnmadeMasks
from handler.datasets import load_dataset, pair_datasets
from handler.datasets.builder import build_dataset
from handler.engine.masks import Measured, extent, from_bitmaps
from handler.storage import open_source


def test_masks_follow_their_rows_through_the_rules() -> None:
    drawn = np.zeros((4, 6, 8), dtype=bool)
    for i in range(4):
        drawn[i, i : i + 2, 2 * i : 2 * i + 3] = True
    masks = from_bitmaps(drawn)
    xyxy = extent(masks)
    xyxy[1, 0] = np.nan  # a defective box: skipped with its mask
    rows = ParsedRows(
        xyxy=xyxy,
        class_id=np.zeros(4, dtype=np.int64),
        image=np.zeros(4, dtype=np.int64),
        source_index=None,
        position=lambda row: f"annotation {row}",
        crowd=np.array([False, False, True, False]),  # a crowd region: left out with its mask
        masks=masks,
    )
    images = Images(["a.jpg"], np.array([8.0]), np.array([6.0]))
    dataset = build_dataset("gt.json", "coco", rows, images, ["cat"])
    kept = dataset.boxes
    assert len(kept) == 2 and kept.has_masks
    assert np.array_equal(extent(kept.mask_runs), extent(masks[[0, 3]]))
    assert dataset.skipped_count == 1 and dataset.crowd_excluded == 1


def test_a_coco_ground_truth_s_polygons_are_rasterised_only_when_masks_are_scored() -> None:
    """Read, the polygons stay vertices; paired with box predictions they are left out unmade,
    with mask predictions made into runs whose pixels are pycocotools'."""
    existing(COCO_PAIR, "the third-party data")
    gt = load_dataset(open_source(str(COCO_PAIR_GT)))
    assert isinstance(gt.dataset.boxes.masks, UnmadeMasks) and gt.dataset.boxes.has_masks
    boxes = load_dataset(open_source(str(COCO_PAIR_RESULTS)), None, gt)
    assert pair_datasets(gt.dataset, boxes.dataset).gt.masks is None
    masks = load_dataset(open_source(str(COCO_PAIR / "instances_val2014_fakesegm100_results.json")), None, gt)
    paired = pair_datasets(gt.dataset, masks.dataset).gt
    assert isinstance(paired.masks, MaskRuns)
    document = json.loads(COCO_PAIR_GT.read_text())
    sizes = {i["id"]: (i["height"], i["width"]) for i in document["images"]}
    pixels = sum(
        int(coco_mask.area(coco_mask.merge(coco_mask.frPyObjects(a["segmentation"], *sizes[a["image_id"]]))))
        for a in document["annotations"]
        if not a["iscrowd"]
    )
    assert int(Measured.of(paired.masks).pixels.sum()) == pixels > 0
