"""What inferring the readings costs a clean run: `python bench/readings_cost.py [default,big]`.

Runs the node's code path in this process on a benchmark workload (bench/workloads.py, generated
as `bench/run.py` does), timing the whole run and, inside it, the search for other readings
(`ReadSides.best_reading`), three times each; prints the medians and their ratio. The readings are
looked at on every run (no pre-check), so this is their price on a run with nothing to find. It
also times the node as a whole process (`python -m handler`, what the benchmark and a user wait
for, interpreter start and imports included) and gives the search's share of that too.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.workloads import WORKLOADS, ensure_data  # noqa: E402
from handler.inputs import parse_inputs  # noqa: E402
from handler.pipeline import run  # noqa: E402
from handler.readings import sides as readings_module  # noqa: E402
from handler.storage.local import LocalStore  # noqa: E402

REPEATS: Final = 5
GENERATOR: Final = ROOT / "bench" / "gen_workload.py"


def timed(gt: Path, pred: Path, threshold: str) -> tuple[float, float]:
    """One run's wall time and the readings search's inside it."""
    spent: list[float] = []
    search = readings_module.ReadSides.best_reading

    def watched(self: readings_module.ReadSides, *args: object) -> object:
        started = time.perf_counter()
        try:
            return search(self, *args)  # type: ignore[arg-type]
        finally:
            spent.append(time.perf_counter() - started)

    readings_module.ReadSides.best_reading = watched  # type: ignore[assignment,method-assign]
    try:
        inputs = parse_inputs(
            {"GT_DATASET": str(gt), "PRED_DATASET": str(pred), "CONFIDENCE_THRESHOLD": threshold}
        )
        with tempfile.TemporaryDirectory() as store:
            started = time.perf_counter()
            found = run(inputs, LocalStore(Path(store)))
            wall = time.perf_counter() - started
    finally:
        readings_module.ReadSides.best_reading = search  # type: ignore[method-assign]
    assert found.findings.other_reading is None, "a clean workload got a reading"
    return wall, sum(spent)


def whole_process(gt: Path, pred: Path, threshold: str) -> float:
    """The node run as a process, as the benchmark runs it: its wall time."""
    environ = {
        **os.environ,
        "GT_DATASET": str(gt),
        "PRED_DATASET": str(pred),
        "CONFIDENCE_THRESHOLD": threshold,
    }
    with tempfile.TemporaryDirectory() as store:
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "handler", "-q", "--store", store],
            env=environ,
            cwd=ROOT,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        return time.perf_counter() - started


def main(names: list[str]) -> None:
    for name in names:
        workload = WORKLOADS[name]
        files = ensure_data(workload, ROOT / "bench" / ".work", GENERATOR)
        threshold = workload.confidence_threshold
        runs = [timed(files.gt, files.results, threshold) for _ in range(REPEATS)]
        process = statistics.median(whole_process(files.gt, files.results, threshold) for _ in range(REPEATS))
        wall = statistics.median(w for w, _ in runs)
        search = statistics.median(s for _, s in runs)
        print(
            f"{name}: readings {search * 1000:.0f} ms = {search / wall:.1%} of run() ({wall:.2f} s), "
            f"{search / process:.1%} of the node's whole process ({process:.2f} s)"
        )


if __name__ == "__main__":
    main(sys.argv[1].split(",") if len(sys.argv) > 1 else ["default", "big"])
