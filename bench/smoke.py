"""The CI smoke benchmark: the engine's time on a small generated workload, as a ratio to a
calibration loop of plain numpy measured in the same process, so that a slower or busier
machine moves both. `python bench/smoke.py` measures it and rewrites bench/baseline.json.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final

import numpy as np
from msgspec.structs import replace

ROOT: Final = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.verify import Tables, paired_tables  # noqa: E402
from bench.workloads import WORKLOADS, ensure_data  # noqa: E402
from handler.engine import evaluate  # noqa: E402
from handler.inputs import DEFAULT_THRESHOLDS  # noqa: E402

BASELINE: Final = ROOT / "bench" / "baseline.json"

GENERATOR: Final = ROOT / "bench" / "gen_workload.py"
SMOKE: Final = WORKLOADS["smoke"]
ROUNDS: Final = 9
_RNG_SEED: Final = 6


@dataclass(frozen=True)
class Ratio:
    engine: float  # best seconds of one evaluation at confidence 0
    calibration: float  # best seconds of the numpy calibration loop

    @property
    def value(self) -> float:
        return self.engine / self.calibration


def smoke_tables(work_dir: Path) -> Tables:
    files = ensure_data(SMOKE, work_dir, GENERATOR)
    return paired_tables(str(files.gt), str(files.results))


def _calibration() -> Callable[[], object]:
    """Plain numpy of the engine's kind: a sort, gathers, element-wise arithmetic, a mask."""
    rng = np.random.default_rng(_RNG_SEED)
    values = rng.random(200_000)
    index = rng.integers(0, len(values), 600_000)

    def loop() -> object:
        order = np.argsort(values)
        a, b = values[index], values[order][index]
        ratio = np.minimum(a, b) / (np.maximum(a, b) + 1.0)
        return np.flatnonzero(ratio > 0.25).size

    return loop


def _best(function: Callable[[], object], times: list[float]) -> None:
    started = time.perf_counter()
    function()
    times.append(time.perf_counter() - started)


def measure(tables: Tables) -> Ratio:
    """Best of `ROUNDS` of each, interleaved so that both see the same machine."""
    thresholds = replace(DEFAULT_THRESHOLDS, confidence_threshold=0.0)

    def engine() -> object:
        return evaluate(tables.gt, tables.pred, tables.n_images, thresholds)

    calibration = _calibration()
    engine_times: list[float] = []
    calibration_times: list[float] = []
    for _ in range(ROUNDS):
        _best(engine, engine_times)
        _best(calibration, calibration_times)
    return Ratio(min(engine_times), min(calibration_times))


def main() -> int:
    ratio = measure(smoke_tables(ROOT / "bench" / ".work"))
    baseline = {**asdict(ratio), "ratio": ratio.value, "workload": list(SMOKE.generator_args)}
    BASELINE.write_text(json.dumps(baseline, indent=2) + "\n")
    print(json.dumps(baseline))
    return 0


if __name__ == "__main__":
    sys.exit(main())
