"""pycocotools: load GT and results, COCOeval evaluate + accumulate (what a user of it runs)."""

from __future__ import annotations

import sys

from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from bench.peers.cocoeval_api import evaluate

if __name__ == "__main__":
    evaluate(COCO, COCOeval, *sys.argv[1:4])
