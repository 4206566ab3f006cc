"""hotcoco (Rust, multi-threaded): load GT and results, COCOeval evaluate + accumulate, as with
pycocotools (hotcoco mirrors its API)."""

from __future__ import annotations

import sys

from hotcoco import COCO, COCOeval

from bench.peers.cocoeval_api import evaluate

if __name__ == "__main__":
    evaluate(COCO, COCOeval, *sys.argv[1:4])
