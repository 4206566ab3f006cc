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
from helpers.needs import existing

from bench.smoke import BASELINE, GENERATOR, SMOKE, measure, smoke_tables
from bench.verify import Tables, verify
from bench.workloads import ensure_data

SLOWDOWN_ALLOWED = 5.0


@pytest.fixture(scope="module")
def generator() -> Path:
    return existing(GENERATOR, "the workload generator")


@pytest.fixture(scope="module")
def work_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bench")


@pytest.fixture(scope="module")
def tables(generator: Path, work_dir: Path) -> Tables:
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
def test_engine_equals_the_reference_on_a_generated_workload(
    generator: Path, work_dir: Path, threshold: float
) -> None:
    files = ensure_data(SMOKE, work_dir, generator)
    result = verify(str(files.gt), str(files.results), threshold)
    assert result["equal"], result
    assert result["engine"]["counts"]["total"] > 2000  # the workload is not trivially empty


def test_jsonl_shard_writer_gives_the_columns_back() -> None:
    import numpy as np
    import orjson

    from bench.jsonl import asset_header, box_record, shard_bytes

    assets = {
        "id": np.array([7, 8, 9]),
        "width": np.array([640, 5, 1920]),
        "height": np.array([480, 6, 1080]),
    }
    boxes = {
        "class_id": np.array([1, 90, 5]),
        "x_min": np.array([0, 1234, 5]),
        "y_min": np.array([1, 2, 3]),
        "x_max": np.array([64000, 99999, 10]),
        "y_max": np.array([5, 6, 7]),
        "confidence": np.array([1000, 123, 1]),
        "asset": np.array([0, 0, 2]),
    }
    text = shard_bytes(asset_header(b"t03-", 6, 4), assets, box_record(6, 3), boxes, boxes["asset"])
    lines = [orjson.loads(line) for line in text.splitlines()]
    assert [a["asset_id"] for a in lines] == ["t03-000007", "t03-000008", "t03-000009"]
    assert [len(a["annotations"]) for a in lines] == [2, 0, 1]
    assert lines[0]["annotations"][1] == {
        "label": "c90",
        "x_min": 12.34,
        "y_min": 0.02,
        "x_max": 999.99,
        "y_max": 0.06,
        "confidence": 0.123,
    }
    assert (lines[2]["width"], lines[2]["annotations"][0]["confidence"]) == (1920, 0.001)


def test_huge_shards_are_valid_jsonl_of_the_planned_size() -> None:
    import orjson

    from bench.huge import shard

    gt, pred = shard(0, 5, 200)
    gt_assets = [orjson.loads(line) for line in gt.splitlines()]
    pred_assets = [orjson.loads(line) for line in pred.splitlines()]
    assert [a["asset_id"] for a in gt_assets] == [a["asset_id"] for a in pred_assets]
    assert gt_assets[0]["asset_id"] == "h0005000"
    n_gt = sum(len(a["annotations"]) for a in gt_assets)
    n_pred = sum(len(a["annotations"]) for a in pred_assets)
    assert 1800 < n_gt < 2200 and 18000 < n_pred < 22000
    for asset in gt_assets + pred_assets:
        for box in asset["annotations"]:
            assert 0 <= box["x_min"] < box["x_max"] <= asset["width"]
            assert 0 <= box["y_min"] < box["y_max"] <= asset["height"]


def test_the_1b_estimate_follows_its_formula() -> None:
    from bench.estimate import MERGE_S, TASK_OVERHEAD_S, ShardCost, estimate_lines, wall_seconds

    cost = ShardCost(seconds=1.0, rss_mb=500, boxes=100_000_000, source="test")  # 10 shards of 1B boxes
    assert wall_seconds(cost, 4) == 3 * (1.0 + TASK_OVERHEAD_S) + 10 * MERGE_S
    row = next(line for line in estimate_lines(cost) if line.startswith("| 1 |"))
    assert row == f"| 1 | {(10 * (1.0 + TASK_OVERHEAD_S) + 10 * MERGE_S) / 60:.1f} | 500 |"  # minutes
