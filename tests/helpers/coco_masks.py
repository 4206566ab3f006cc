"""The real COCO val2014 pair on masks (cocoapi's own mask results for the same detections as its
box results) and its oracle: pycocotools' mask IoU of every same-image pair, crowds left out, the
contract's literal greedy (`reference.py`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pycocotools.mask as coco_mask
from pycocotools.coco import COCO

from helpers import reference as ref
from helpers.needs import existing
from helpers.paths import THIRD_PARTY

IOU_MIN, IOU_PERFECT, CONFIDENCE = 0.3, 0.8, 0.5


def coco_pair() -> tuple[Path, Path, Path]:
    """The GT (polygons), the mask results (RLE strings) and the box results of the same detections."""
    folder = existing(THIRD_PARTY / "coco_val2014_100", "the third-party data")
    return (
        folder / "instances_val2014_100.json",
        folder / "instances_val2014_fakesegm100_results.json",
        folder / "instances_val2014_fakebbox100_results.json",
    )


def per_image(gt_path: Path, results_path: Path) -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """Each GT image's non-crowd annotations (their mask as pycocotools' RLE, `rle`) and its results."""
    gt = COCO(str(gt_path))
    results: list[dict[str, Any]] = json.loads(results_path.read_text())
    images = []
    for image_id in sorted(gt.getImgIds()):
        anns = [a for a in gt.loadAnns(gt.getAnnIds(imgIds=[image_id])) if not a["iscrowd"]]
        images.append(
            (
                [{**a, "rle": gt.annToRLE(a), "name": gt.cats[a["category_id"]]["name"]} for a in anns],
                [
                    {**r, "name": gt.cats[r["category_id"]]["name"]}
                    for r in results
                    if r["image_id"] == image_id
                ],
            )
        )
    return images


def oracle(gt_path: Path, results_path: Path) -> ref.Evaluation:
    """pycocotools' mask IoU of every same-image pair and the contract's greedy."""
    images, pair_ious = [], []
    for anns, dets in per_image(gt_path, results_path):
        ious = coco_mask.iou([r["segmentation"] for r in dets], [a["rle"] for a in anns], [0] * len(anns))
        images.append(
            ref.RefImage(
                tuple(ref.GtBox((0, 0, 0, 0), hash(a["name"])) for a in anns),
                tuple(ref.PredBox((0, 0, 0, 0), hash(r["name"]), r["score"]) for r in dets),
            )
        )
        pair_ious.append(lambda i, j, ious=ious: float(ious[i][j]))
    return ref.evaluate(images, CONFIDENCE, IOU_MIN, IOU_PERFECT, pair_ious)


def mask_records(gt_path: Path, results_path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The COCO pair as mmdetection's records: masks as RLE dicts (pycocotools' bytes for the GT,
    the results' strings for the predictions), boxes as corners (a result's, its mask's extent)."""

    def corners(box: Any) -> list[float]:
        return [box[0], box[1], box[0] + box[2], box[1] + box[3]]

    gts, predictions = [], []
    for anns, dets in per_image(gt_path, results_path):
        gts.append(
            {
                "bboxes": np.array([corners(a["bbox"]) for a in anns]).reshape(-1, 4),
                "labels": [a["name"] for a in anns],
                "masks": [a["rle"] for a in anns],
            }
        )
        predictions.append(
            {
                "bboxes": np.array([corners(coco_mask.toBbox(r["segmentation"])) for r in dets]).reshape(
                    -1, 4
                ),
                "labels": [r["name"] for r in dets],
                "scores": [r["score"] for r in dets],
                "masks": [r["segmentation"] for r in dets],
            }
        )
    return gts, predictions
