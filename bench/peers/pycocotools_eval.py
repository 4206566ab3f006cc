"""pycocotools: load GT and results, COCOeval evaluate + accumulate (what a user of it runs)."""

from __future__ import annotations

import sys

from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval


def main(gt_path: str, results_path: str) -> None:
    gt = COCO(gt_path)
    evaluation = COCOeval(gt, gt.loadRes(results_path), "bbox")
    evaluation.evaluate()
    evaluation.accumulate()


if __name__ == "__main__":
    main(*sys.argv[1:3])
