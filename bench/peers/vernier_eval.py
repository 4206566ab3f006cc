"""vernier (Rust, multi-threaded): the bbox summary straight from the two files' bytes, its own
one-call path (`vernier.instance.evaluate_bbox_summary`), pycocotools' parity mode."""

from __future__ import annotations

import sys
from pathlib import Path

from vernier.instance import evaluate_bbox_summary


def main(gt_path: str, results_path: str) -> None:
    evaluate_bbox_summary(
        Path(gt_path).read_bytes(),
        Path(results_path).read_bytes(),
        parity_mode="strict",
        max_dets=[1, 10, 100],
        use_cats=True,
    )


if __name__ == "__main__":
    main(*sys.argv[1:3])
