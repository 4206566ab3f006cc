"""The mmeval metric's cost of adding a workload in batches, against one stateless evaluation of it.

    python bench/metric_batches.py [GT RESULTS] [--batch 32] [--repeats 5]

GT and RESULTS default to the 5k workload (bench/.work/default, made by `bench/run.py`). The
records are read once (`load_records`, not timed); then, alternating, median of the repeats:

- `stateless`: `PrelabelingEfficiency()(predictions=..., groundtruths=...)`, one engine call;
- `mmeval_batches`: `PrelabelingEfficiencyMetric.add` per batch (one engine call and one
  tally per image each), then `compute()`;
- `mmeval_stateless`: the mmeval metric's one-shot call on everything, for reference.

The bound: `mmeval_batches / stateless` ≤ 2. The results are checked equal. Prints one
JSON object.
"""

from __future__ import annotations

import argparse
import json
import pickle
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from handler.metric import PrelabelingEfficiency, Records, load_records  # noqa: E402
from handler.mmeval import PrelabelingEfficiencyMetric  # noqa: E402
from handler.storage import open_store  # noqa: E402

DEFAULT_DATA = ROOT / "bench" / ".work" / "default"
BOUND = 2.0


def batches(records: Records, size: int) -> Callable[[], dict[str, Any]]:
    def run() -> dict[str, Any]:
        metric = PrelabelingEfficiencyMetric()
        for start in range(0, len(records.groundtruths), size):
            metric.add(records.predictions[start : start + size], records.groundtruths[start : start + size])
        result: dict[str, Any] = metric.compute()  # mmeval has no type information
        return result

    return run


def timed(run: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = run()
    return time.perf_counter() - started, result


def measure(records: Records, size: int, repeats: int) -> dict[str, Any]:
    cases: dict[str, Callable[[], Any]] = {
        "stateless": lambda: PrelabelingEfficiency()(
            predictions=records.predictions, groundtruths=records.groundtruths
        ).to_dict(),
        "mmeval_batches": batches(records, size),
        "mmeval_stateless": lambda: PrelabelingEfficiencyMetric()(
            predictions=records.predictions, groundtruths=records.groundtruths
        ),
    }
    seconds: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeats):  # alternating, so load on the shared machine hits every case alike
        results = []
        for name, run in cases.items():
            elapsed, result = timed(run)
            seconds[name].append(elapsed)
            results.append(result)
        if any(result != results[0] for result in results):
            raise SystemExit("the batched and stateless results differ")
    median = {name: statistics.median(values) for name, values in seconds.items()}
    return {"median_seconds": median, "result": results[0]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("gt", nargs="?", default=str(DEFAULT_DATA / "gt.json"))
    parser.add_argument("results", nargs="?", default=str(DEFAULT_DATA / "results.json"))
    parser.add_argument("--batch", type=int, default=32, help="images per `add`")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    records = load_records(args.gt, args.results, store=open_store(str(ROOT / "bench" / ".work" / "store")))
    measured = measure(records, args.batch, args.repeats)
    median = measured["median_seconds"]
    probe = PrelabelingEfficiencyMetric()
    probe.add(records.predictions, records.groundtruths)
    ratio = median["mmeval_batches"] / median["stateless"]
    out = {
        "images": len(records.groundtruths),
        "predictions": sum(len(image["bboxes"]) for image in records.predictions),
        "batch": args.batch,
        "repeats": args.repeats,
        "median_seconds": median,
        "ratio_batches_to_stateless": ratio,
        "bound": BOUND,
        "met": ratio <= BOUND,
        "pickled_bytes_per_image": len(pickle.dumps(probe._results)) / len(records.groundtruths),
        "counts": measured["result"]["counts"],
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
