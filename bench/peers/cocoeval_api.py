"""What a pycocotools user runs, for every peer with its API: load GT and results, then
COCOeval evaluate + accumulate (pycocotools, faster-coco-eval, hotcoco, ultrafast-pycocotools)."""

from __future__ import annotations

from typing import Any


def evaluate(coco: Any, cocoeval: Any, gt_path: str, results_path: str, iou_type: str = "bbox") -> None:
    """`iou_type`: "bbox", or "segm" for instance masks (bench/masks.py)."""
    gt = coco(gt_path)
    evaluation = cocoeval(gt, gt.loadRes(results_path), iou_type)
    evaluation.evaluate()
    evaluation.accumulate()
