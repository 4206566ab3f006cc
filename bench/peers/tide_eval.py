"""TIDE: load GT and results with its own COCO readers, evaluate boxes (errors at IoU 0.5)."""

from __future__ import annotations

import sys

from tidecv import TIDE, datasets


def main(gt_path: str, results_path: str) -> None:
    tide = TIDE()
    tide.evaluate(datasets.COCO(gt_path), datasets.COCOResult(results_path), mode=TIDE.BOX, name="run")
    tide.get_all_errors()


if __name__ == "__main__":
    main(*sys.argv[1:3])
