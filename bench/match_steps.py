"""The match-and-score phase by step: CPU seconds of the candidate pairs, the rest of the evaluation
and the confidence sweep, on a workload's tables cut into shards of whole images as the node cuts
them, in this one process; and a digest of what they computed, to check a change left it equal.

    python bench/match_steps.py GT RESULTS [--shards 12] [--repeats 3]

Prints one JSON object per repeat, then the digest (sha256 of every shard's pairs, sweep points
and class counts): the same digest before and after a change means the same results, bit for bit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
from msgspec.structs import replace

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.verify import paired_tables  # noqa: E402
from handler.boxes import BoxTable, IntArray  # noqa: E402
from handler.engine.evaluation import Evaluation, evaluate, pair_floor  # noqa: E402
from handler.engine.matching import candidate_pairs  # noqa: E402
from handler.engine.sweep import Sweep, class_sweep  # noqa: E402
from handler.inputs import DEFAULT_THRESHOLDS  # noqa: E402


def _shard(table: BoxTable, first: int, stop: int) -> BoxTable:
    """The boxes of images [first, stop), their images numbered from 0."""
    rows = np.flatnonzero((table.image >= first) & (table.image < stop))
    part = table[rows]
    return part.with_columns(image=part.image - first)


def _digest(evaluation: Evaluation, sweep: Sweep, by_class: IntArray, into: Any) -> None:
    for column in (evaluation.pairs.gt, evaluation.pairs.pred, evaluation.pairs.iou, by_class):
        into.update(np.ascontiguousarray(column).tobytes())
    for point in sweep.points:
        tally = point.tally
        into.update(repr((point.threshold, point.predictions_kept, tally.same_class_iou)).encode())
        into.update(tally.counts.tobytes())


def main() -> int:
    parser = argparse.ArgumentParser(prog="python bench/match_steps.py", description=__doc__.split("\n")[0])
    parser.add_argument("gt")
    parser.add_argument("results")
    parser.add_argument("--shards", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threshold", type=float, default=0.5)
    args = parser.parse_args()
    tables = paired_tables(args.gt, args.results)
    thresholds = replace(DEFAULT_THRESHOLDS, confidence_threshold=args.threshold)
    n_classes = int(max(tables.gt.class_id.max(), tables.pred.class_id.max())) + 1
    bounds = np.linspace(0, tables.n_images, args.shards + 1).astype(int).tolist()
    shards = [
        (_shard(tables.gt, first, stop), _shard(tables.pred, first, stop), stop - first)
        for first, stop in pairwise(bounds)
    ]
    digest = hashlib.sha256()
    for repeat in range(args.repeats):
        spent = {"candidate pairs": 0.0, "evaluation without them": 0.0, "class sweep": 0.0}
        for gt, pred, n_images in shards:
            started = time.process_time()
            candidate_pairs(gt, pred, n_images, pair_floor(thresholds.iou_min))
            paired = time.process_time()
            evaluation = evaluate(gt, pred, n_images, thresholds)
            evaluated = time.process_time()
            sweep, by_class = class_sweep(evaluation, thresholds, n_classes)
            swept = time.process_time()
            spent["candidate pairs"] += paired - started
            spent["evaluation without them"] += (evaluated - paired) - (paired - started)
            spent["class sweep"] += swept - evaluated
            if repeat == 0:
                _digest(evaluation, sweep, by_class, digest)
        print(json.dumps({step: round(seconds, 3) for step, seconds in spent.items()}))
    print(json.dumps({"digest": digest.hexdigest()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
