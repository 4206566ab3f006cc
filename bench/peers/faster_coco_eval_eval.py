"""faster-coco-eval: load GT and results, COCOeval_faster evaluate + accumulate."""

from __future__ import annotations

import sys

from faster_coco_eval import COCO, COCOeval_faster


def main(gt_path: str, results_path: str) -> None:
    gt = COCO(gt_path)
    evaluation = COCOeval_faster(gt, gt.loadRes(results_path), "bbox")
    evaluation.evaluate()
    evaluation.accumulate()


if __name__ == "__main__":
    main(*sys.argv[1:3])
