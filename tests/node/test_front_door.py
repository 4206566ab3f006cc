"""Every way in goes through the one front door: the node, the CLI (`run` and `compare`),
`compare`, the Python metric and the mmeval metric each process what they are given and compute
their result by `FrontDoor`, as mmeval's BaseMetric runs (process, then compute).

The door's methods are watched, not replaced: each call is noted, then runs as it would. A way in
that wired the flow itself would leave the door's notes empty (the architecture test,
`test_the_entry_points_go_through_the_front_door`, refuses the imports that would let it)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.node_run import run_cli, run_node
from helpers.paths import EXAMPLES

from handler import PrelabelingEfficiency, compare
from handler.front_door import FrontDoor
from handler.metric import load_records
from handler.mmeval import PrelabelingEfficiencyMetric

GT, PRED = str(EXAMPLES / "gt.json"), str(EXAMPLES / "predictions.jsonl")
# What a way in calls of the door: its process steps, then its compute steps.
DOOR_STEPS = (
    "process",
    "process_datasets",
    "read",
    "read_against",
    "process_plan",
    "process_run",
    "costs_on",
    "compute",
    "compute_findings",
)
NODE = ["read", "process_run", "process_plan", "costs_on", "compute_findings"]
COMPARE = ["read_against", "process_plan", "read_against", "process_plan", "costs_on"]


@pytest.fixture
def door_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The names of the door's steps called, in order."""
    called: list[str] = []

    def noted(name: str, step: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(step)
        def note(*args: Any, **kwargs: Any) -> Any:
            called.append(name)
            return step(*args, **kwargs)

        return note

    for name in DOOR_STEPS:
        monkeypatch.setattr(FrontDoor, name, noted(name, getattr(FrontDoor, name)))
    yield called


def test_the_node_goes_through_the_door(door_calls: list[str], tmp_path: Path) -> None:
    run = run_node(tmp_path / "store", GT_DATASET=GT, PRED_DATASET=PRED)
    assert run.code == 0, run.err
    assert door_calls == NODE


def test_the_cli_runs_and_compares_through_the_door(door_calls: list[str], tmp_path: Path) -> None:
    ran = run_cli(GT, PRED, "--store", str(tmp_path / "store"), "-q")
    assert ran.returncode == 0, ran.stderr
    assert door_calls == NODE
    door_calls.clear()
    compared = run_cli("compare", GT, PRED, PRED, "--store", str(tmp_path / "store"))
    assert compared.returncode == 0, compared.stderr
    assert door_calls == COMPARE


def test_compare_goes_through_the_door(door_calls: list[str]) -> None:
    found = compare(GT, PRED, PRED)
    assert found.context.same_predictions and door_calls == COMPARE  # A is B


def test_the_python_metric_goes_through_the_door(door_calls: list[str]) -> None:
    records = load_records(GT, PRED)
    assert door_calls == []  # reading records evaluates nothing
    metric = PrelabelingEfficiency()
    metric.add(records.predictions, records.groundtruths)
    added = metric.compute()
    assert door_calls == ["process", "compute"]
    door_calls.clear()
    assert metric.evaluate(GT, PRED) == added
    assert door_calls == ["process_datasets", "compute"]


def test_the_mmeval_metric_goes_through_the_door(door_calls: list[str]) -> None:
    records = load_records(GT, PRED)
    metric = PrelabelingEfficiencyMetric()
    metric.add(records.predictions, records.groundtruths)
    result = metric.compute()
    assert door_calls == ["process", "compute"]
    assert (
        result
        == PrelabelingEfficiency()(
            predictions=records.predictions, groundtruths=records.groundtruths
        ).to_dict()
    )
