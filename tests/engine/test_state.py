"""Partial states merge exactly: any split into shards, merged in any order or grouping, is one shot,
for the tally and every registered analysis, compare's own included (the registry is iterated, so a
new one is covered)."""

from __future__ import annotations

import functools
import math
import operator
from random import Random

import numpy as np
from helpers.cases import THRESHOLDS, grid_tables
from helpers.examples import examples
from helpers.states import canonical
from hypothesis import given, settings
from hypothesis import strategies as st

from handler.boxes import BoxTable, Dataset
from handler.datasets import PairedBoxes, pair_datasets
from handler.engine.exactsum import ExactSum
from handler.engine.state import EvaluationState
from handler.execution.shards import paired_shards, run_paired_shard
from handler.features import ANALYSES, COMPARE_ONLY

REGISTERED = (*ANALYSES, *COMPARE_ONLY)


def _dataset(boxes: BoxTable, n_images: int, names: list[str]) -> Dataset:
    return Dataset(
        source="mem",
        format="native",
        asset_ids=[f"img{i}" for i in range(n_images)],
        class_names=names,
        boxes=boxes,
        widths=np.full(n_images, 100.0),
        heights=np.full(n_images, 100.0),
    )


def _states(gt: BoxTable, pred: BoxTable, n_images: int, shards: int) -> list[EvaluationState]:
    gt_set, pred_set = _dataset(gt, n_images, ["car", "dog"]), _dataset(pred, n_images, ["dog", "car"])
    paired: PairedBoxes = pair_datasets(gt_set, pred_set)
    tasks = paired_shards(paired, THRESHOLDS, shards, REGISTERED)
    return [run_paired_shard(task).state for task in tasks]


@settings(max_examples=examples(60), deadline=None, derandomize=True)
@given(grid_tables(), st.integers(1, 5), st.randoms(use_true_random=False))
def test_any_split_merged_in_any_order_equals_one_shot(
    tables: tuple[BoxTable, BoxTable, int], shards: int, random: Random
) -> None:
    gt, pred, n_images = tables
    (one_shot,) = _states(gt, pred, n_images, 1)
    parts = _states(gt, pred, n_images, shards)
    shuffled = list(parts)
    random.shuffle(shuffled)
    merged = functools.reduce(operator.add, shuffled)
    assert set(merged.partials) == set(REGISTERED)  # every registered analysis, whatever it is
    assert canonical(merged) == canonical(one_shot)
    if len(parts) >= 3:  # associative: (a + b) + c == a + (b + c)
        a, b, c = parts[:3]
        assert canonical((a + b) + c) == canonical(a + (b + c))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.floats(0, 1, allow_nan=False), max_size=60), st.integers(0, 60))
def test_exact_sums_add_up_to_fsum_in_any_split(values: list[float], cut: int) -> None:
    array = np.array(values, dtype=np.float64)
    whole = ExactSum.of(array)
    assert whole.total == math.fsum(values)
    assert ExactSum.of(array[:cut]) + ExactSum.of(array[cut:]) == whole


def test_exact_sums_of_many_close_values_and_of_values_far_apart() -> None:
    # IoUs (one sum of mantissas on a common exponent) and values 2**-60 apart (one sum per exponent)
    close = np.random.default_rng(0).uniform(0.3, 1.0, 200_000)
    close[:1000] = 1 - 2**-53
    apart = np.array([1.0, 2.0**-30, 2.0**-60, 0.0, 0.75])
    for values in (close, apart, np.concatenate((close, apart))):
        assert ExactSum.of(values).total == math.fsum(values.tolist())
        assert ExactSum.of(values) == ExactSum.per_group(values, np.zeros(len(values), dtype=np.int64), 1)[0]
