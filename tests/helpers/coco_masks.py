"""The mask oracle: pycocotools' mask IoU of every same-image pair of a COCO ground truth (crowd
regions left out) and a results list, then the contract's literal greedy (`reference.py`) at the
node's defaults. Any COCO `segmentation` (polygons, RLE with counts as a list or a string) is
turned into RLE as pycocotools' `annToRLE` does; classes are compared by name."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Final

from pycocotools import mask as coco_mask

from helpers import reference as ref
from helpers.tool_files import coco_rle

IOU_MIN: Final = 0.3
IOU_PERFECT: Final = 0.8
CONFIDENCE: Final = 0.5
# The COCO val2014 pair's oracle (its ground truth and cocoapi's fakesegm100 mask results).
PAIR_COUNTS: Final = {
    "correct": 150,
    "shifted": 166,
    "class_confused": 38,
    "false_positive": 14,
    "false_negative": 476,
}


def oracle(gt: dict[str, Any], results: list[dict[str, Any]]) -> ref.Evaluation:
    """The oracle's evaluation of `results` against the COCO ground truth document `gt`."""
    names = {c["id"]: c["name"] for c in gt["categories"]}
    classes = {name: number for number, name in enumerate(sorted(set(names.values())))}
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
                tuple(ref.GtBox((0, 0, 0, 0), classes[names[a["category_id"]]]) for a in anns),
                tuple(ref.PredBox((0, 0, 0, 0), classes[names[r["category_id"]]], r["score"]) for r in dets),
            )
        )
        pair_ious.append(_pair_iou(ious))
    return ref.evaluate(images, CONFIDENCE, IOU_MIN, IOU_PERFECT, pair_ious)


def _pair_iou(ious: Any) -> ref.PairIou:
    return lambda i, j: float(ious[i][j])
