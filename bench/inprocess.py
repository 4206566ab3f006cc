"""What the harness measures inside one process: the confidence sweep's cost, the engine
against the pure-Python reference (`tests/helpers/reference.py`) on a whole workload, and the peak
RSS reached by the end of each phase of one node run.

    python bench/inprocess.py sweep GT RESULTS [--repeats 3]
    python bench/inprocess.py verify GT RESULTS --threshold 0.5
    python bench/inprocess.py memory GT RESULTS --threshold 0.5

Each prints one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from msgspec.structs import replace

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.verify import paired_tables, verify  # noqa: E402
from handler.boxes import BoxTable  # noqa: E402
from handler.engine import Thresholds  # noqa: E402
from handler.engine.evaluation import evaluate_pairs, pair_floor  # noqa: E402
from handler.engine.matching import PAIR_BUDGET, candidate_pairs  # noqa: E402
from handler.inputs import DEFAULT_THRESHOLDS  # noqa: E402
from tests.helpers.engine import confidence_sweep  # noqa: E402


@dataclass(frozen=True)
class SweepCost:
    """Wall-clock seconds of the three steps: the sweep's cost on its own."""

    candidate_pairs: float
    evaluation: float
    sweep: float
    pairs: int


def sweep_cost(
    gt: BoxTable, pred: BoxTable, n_images: int, thresholds: Thresholds, budget: int = PAIR_BUDGET
) -> SweepCost:
    """Time the candidate pairs, the evaluation at the used threshold, and the sweep separately."""
    started = time.perf_counter()
    pairs = candidate_pairs(gt, pred, n_images, pair_floor(thresholds.iou_min), budget)
    paired = time.perf_counter()
    evaluation = evaluate_pairs(gt, pred, pairs, thresholds)
    evaluated = time.perf_counter()
    confidence_sweep(evaluation, thresholds)
    swept = time.perf_counter()
    return SweepCost(paired - started, evaluated - paired, swept - evaluated, len(pairs.iou))


def sweep(gt: str, results: str, threshold: float, repeats: int) -> dict[str, Any]:
    """Median seconds of candidate pairs, the evaluation and the sweep (`sweep_cost`)."""
    tables = paired_tables(gt, results)
    thresholds = replace(DEFAULT_THRESHOLDS, confidence_threshold=threshold)
    costs = [asdict(sweep_cost(tables.gt, tables.pred, tables.n_images, thresholds)) for _ in range(repeats)]
    return {key: statistics.median(c[key] for c in costs) for key in costs[0]}


def memory(gt: str, results: str, threshold: float) -> dict[str, Any]:
    """Peak RSS (MB) of this process at the end of each phase of `pipeline.run`."""
    from handler.inputs import parse_inputs
    from handler.pipeline import run
    from handler.storage import open_store

    peaks: dict[str, float] = {}

    def log(phase: str, seconds: float) -> None:
        peaks[phase] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    inputs = parse_inputs({"GT_DATASET": gt, "PRED_DATASET": results, "CONFIDENCE_THRESHOLD": str(threshold)})
    with tempfile.TemporaryDirectory(prefix="prelabel-bench-store-") as store:
        run(inputs, open_store(store), log=log)
    return peaks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=("sweep", "verify", "memory"))
    parser.add_argument("gt")
    parser.add_argument("results")
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    if args.what == "sweep":
        out = sweep(args.gt, args.results, args.threshold, args.repeats)
    elif args.what == "memory":
        out = memory(args.gt, args.results, args.threshold)
    else:
        out = verify(args.gt, args.results, args.threshold)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
