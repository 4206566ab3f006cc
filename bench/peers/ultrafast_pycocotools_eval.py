"""ultrafast-pycocotools (Rust, multi-threaded, a bit-exact pycocotools replacement): load GT
and results, COCOeval evaluate + accumulate, as with pycocotools (it mirrors its API)."""

from __future__ import annotations

import sys

from ultrafast_pycocotools import COCO, COCOeval

from bench.peers.cocoeval_api import evaluate

if __name__ == "__main__":
    evaluate(COCO, COCOeval, *sys.argv[1:3])
