"""ultrafast-pycocotools (Rust, multi-threaded, a bit-exact pycocotools replacement): load GT
and results, COCOeval evaluate + accumulate, as with pycocotools (it mirrors its API)."""

from __future__ import annotations

import sys

from ultrafast_pycocotools import COCO, COCOeval


def main(gt_path: str, results_path: str) -> None:
    gt = COCO(gt_path)
    evaluation = COCOeval(gt, gt.loadRes(results_path), "bbox")
    evaluation.evaluate()
    evaluation.accumulate()


if __name__ == "__main__":
    main(*sys.argv[1:3])
