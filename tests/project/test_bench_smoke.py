"""CI smoke benchmark: the engine stays within 5x of its checked-in speed, and stays exact.

The time is a ratio to a numpy calibration loop measured in the same test (bench/smoke.py),
so a slower or busier machine moves both; only an engine that became > 5x slower than
`bench/baseline.json` fails. The same generated workload is checked against the pure-Python
reference, at the default threshold and with every prediction kept.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.smoke import BASELINE, GENERATOR, SMOKE, measure, smoke_tables
from bench.verify import Tables, verify
from bench.workloads import ensure_data

SLOWDOWN_ALLOWED = 5.0

pytestmark = pytest.mark.skipif(not GENERATOR.exists(), reason=f"no workload generator at {GENERATOR}")


@pytest.fixture(scope="module")
def work_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bench")


@pytest.fixture(scope="module")
def tables(work_dir: Path) -> Tables:
    return smoke_tables(work_dir)


def test_engine_is_not_more_than_5x_slower_than_the_baseline(tables: Tables) -> None:
    baseline = json.loads(BASELINE.read_text())
    assert baseline["workload"] == list(SMOKE.generator_args), "bench/baseline.json is for another workload"
    ratio = measure(tables)
    slowdown = ratio.value / baseline["ratio"]
    assert slowdown <= SLOWDOWN_ALLOWED, (
        f"the engine takes {ratio.engine * 1e3:.1f} ms = {ratio.value:.2f}x the calibration loop "
        f"({ratio.calibration * 1e3:.1f} ms); the baseline is {baseline['ratio']:.2f}x: "
        f"{slowdown:.1f}x slower (allowed {SLOWDOWN_ALLOWED:g}x)"
    )


@pytest.mark.parametrize("threshold", [0.5, 0.0])
def test_engine_equals_the_reference_on_a_generated_workload(work_dir: Path, threshold: float) -> None:
    files = ensure_data(SMOKE, work_dir, GENERATOR)
    result = verify(str(files.gt), str(files.results), threshold)
    assert result["equal"], result
    assert result["engine"]["counts"]["total"] > 2000  # the workload is not trivially empty
