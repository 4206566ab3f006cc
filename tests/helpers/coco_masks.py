"""The real COCO val2014 pair on masks (cocoapi's own mask results for the same detections as its
box results) and its oracle: pycocotools' mask IoU of every same-image pair, crowds left out, the
contract's literal greedy (`reference.py`)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any, Final

import numpy as np
import pycocotools.mask as coco_mask
from hypothesis import strategies as st
from pycocotools.coco import COCO

from handler.boxes import BoolArray, IntArray, MaskRuns
from handler.engine.masks import from_text
from helpers import reference as ref
from helpers.needs import existing
from helpers.paths import THIRD_PARTY
from helpers.tool_files import coco_rle

IOU_MIN, IOU_PERFECT, CONFIDENCE = 0.3, 0.8, 0.5
# The pair's oracle: its counts.
PAIR_COUNTS: Final = {
    "correct": 150,
    "shifted": 166,
    "class_confused": 38,
    "false_positive": 14,
    "false_negative": 476,
}


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
    return oracle_of(json.loads(gt_path.read_text()), json.loads(results_path.read_text()))


def oracle_of(gt: dict[str, Any], results: list[dict[str, Any]]) -> ref.Evaluation:
    """The oracle of a results list against a COCO ground truth document, whatever form their
    `segmentation` takes (polygons, RLE with counts as a list or a string: `annToRLE`'s RLE);
    classes compared by name."""
    names = {c["id"]: c["name"] for c in gt["categories"]}
    sizes = {i["id"]: (i["height"], i["width"]) for i in gt["images"]}
    objects: dict[int, list[dict[str, Any]]] = defaultdict(list)
    detections: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for annotation in gt["annotations"]:
        if not annotation.get("iscrowd"):
            objects[annotation["image_id"]].append(annotation)
    for result in results:
        detections[result["image_id"]].append(result)
    images: list[ref.RefImage] = []
    pair_ious: list[ref.PairIou] = []
    for image_id in sorted(sizes):
        anns, dets = objects[image_id], detections[image_id]
        ious = coco_mask.iou(
            [coco_rle(r["segmentation"], *sizes[image_id]) for r in dets],
            [coco_rle(a["segmentation"], *sizes[image_id]) for a in anns],
            [0] * len(anns),
        )
        images.append(
            ref.RefImage(
                tuple(ref.GtBox((0, 0, 0, 0), hash(names[a["category_id"]])) for a in anns),
                tuple(ref.PredBox((0, 0, 0, 0), hash(names[r["category_id"]]), r["score"]) for r in dets),
            )
        )
        pair_ious.append(_pair_iou(ious))
    return ref.evaluate(images, CONFIDENCE, IOU_MIN, IOU_PERFECT, pair_ious)


def _pair_iou(ious: Any) -> ref.PairIou:
    return lambda i, j: float(ious[i][j])


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


def from_strings(strings: list[bytes], height: IntArray, width: IntArray) -> tuple[MaskRuns, BoolArray]:
    """`from_text` of separate strings (the node decodes them from the one text they were read from)."""
    lengths = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
    bounds = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    return from_text(b"".join(strings), bounds, height, width)


# Objects drawn as COCO writes them: each a list of parts, each part [x0, y0, x1, y1, ...].
Objects = list[list[list[float]]]


@st.composite
def objects_on_an_image(draw: st.DrawFn, coordinate: st.SearchStrategy[float]) -> tuple[Objects, int, int]:
    """Objects of 1-6 parts of 3-12 points, some points repeated (an edge of length 0) and some
    edges nearly vertical or horizontal (a point moved a tenth from the one before)."""
    height, width = draw(st.integers(1, 90)), draw(st.integers(1, 90))
    objects = []
    for _ in range(draw(st.integers(1, 4))):
        parts = []
        for _ in range(draw(st.integers(1, 6))):
            points = draw(st.lists(st.tuples(coordinate, coordinate), min_size=3, max_size=12))
            shape = draw(st.sampled_from(("any", "repeated", "steep", "flat")))
            if shape == "repeated":
                points.insert(1, points[0])
            elif shape in ("steep", "flat"):
                x, y = points[0]
                points.insert(1, (x + 0.1, y + 60) if shape == "steep" else (x + 60, y + 0.1))
            parts.append([c for point in points for c in point])
        objects.append(parts)
    return objects, height, width
