"""faster-coco-eval: load GT and results, COCOeval_faster evaluate + accumulate."""

from __future__ import annotations

import sys

from faster_coco_eval import COCO, COCOeval_faster

from bench.peers.cocoeval_api import evaluate

if __name__ == "__main__":
    evaluate(COCO, COCOeval_faster, *sys.argv[1:4])
