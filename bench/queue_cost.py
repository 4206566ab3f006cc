"""What the review queue costs a run: its analysis on every shard, its part, its size.

    python bench/queue_cost.py WORKLOAD_DIR     (a folder with gt.json and results.json, e.g. big's)

One in-process run (one worker, so every shard's time is this process's) with the queue's two
steps timed where they run: the `confidence_bins` analysis on each shard (beside `per_image`,
whose per-image counts it sits next to), and the `review_queue.csv` finisher on the merged state;
then the queue and its CSV again, three times each, on the merged state alone.
"""

from __future__ import annotations

import pickle
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from msgspec.structs import force_setattr

ROOT: Final = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import handler.entry  # noqa: E402, F401 (first of the package, as the node imports it)
from handler.engine.analyses.confidence_bins import CONFIDENCE_BINS  # noqa: E402
from handler.engine.analyses.per_image import PER_IMAGE  # noqa: E402
from handler.engine.plugin import Analysis  # noqa: E402
from handler.engine.review import review_queue  # noqa: E402
from handler.engine.state import EvaluationState  # noqa: E402
from handler.engine.timecost import TimeCosts  # noqa: E402
from handler.execution import ExecutionOptions  # noqa: E402
from handler.features.review.finisher import REVIEW_QUEUE, queue_csv  # noqa: E402
from handler.inputs import parse_inputs  # noqa: E402
from handler.pipeline import run  # noqa: E402
from handler.sections.finishing import Finished, Finishing  # noqa: E402
from handler.storage.local import LocalStore  # noqa: E402


def _timed(spent: dict[str, float], key: str, function: Callable[..., Any]) -> Callable[..., Any]:
    def timed(*args: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args)
        finally:
            spent[key] = spent.get(key, 0.0) + time.perf_counter() - started

    return timed


def _time_analyses(spent: dict[str, float], analyses: tuple[Analysis[Any], ...]) -> None:
    for analysis in analyses:  # frozen records: swapped in place, for this process only
        force_setattr(analysis, "shard", _timed(spent, analysis.name, analysis.shard))


def main(data: Path) -> None:
    spent: dict[str, float] = {}
    _time_analyses(spent, (CONFIDENCE_BINS, PER_IMAGE))
    states: list[EvaluationState] = []
    finish = REVIEW_QUEUE.finish

    def finishing(given: Finishing) -> Finished:
        states.append(given.merged.state)
        return finish(given)

    force_setattr(REVIEW_QUEUE, "finish", _timed(spent, "review_queue.csv finisher", finishing))
    inputs = parse_inputs({"GT_DATASET": str(data / "gt.json"), "PRED_DATASET": str(data / "results.json")})
    with tempfile.TemporaryDirectory() as store:
        started = time.perf_counter()
        result = run(inputs, LocalStore(Path(store)), execution=ExecutionOptions(workers=1))
        wall = time.perf_counter() - started
    findings, state = result.findings, states[0]
    figures, queued = findings.dataset, findings.review_queue
    print(f"{figures.images} images, {figures.predictions_kept} kept predictions, run {wall:.2f} s")
    for key, seconds in spent.items():
        print(f"  {key}: {seconds * 1000:.1f} ms")
    for _ in range(3):
        started = time.perf_counter()
        queue = review_queue(state, TimeCosts())
        between = time.perf_counter()
        text = queue_csv(queue)
        queue_ms, csv_ms = (between - started) * 1000, (time.perf_counter() - between) * 1000
        print(f"  review_queue {queue_ms:.1f} ms, queue_csv {csv_ms:.1f} ms")
    bins, images = len(pickle.dumps(state.of(CONFIDENCE_BINS))), len(pickle.dumps(state.of(PER_IMAGE)))
    print(f"  review_queue.csv {len(text)} bytes; partials: confidence_bins {bins}, per_image {images} bytes")
    print(f"  uncertain boxes {queued.uncertain_boxes} on {queued.images_with_uncertain_boxes} images")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
