"""Labeling tools' logs read for the seconds per action (handler/datasets/logs/): the Label Studio
diff and the CVAT events, by hand-computed cases, and hostile logs skipped or refused in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from helpers.labeler_logs import (
    CVAT_DOCS_COLUMNS,
    box_region,
    cvat_event,
    cvat_events_csv,
    label_studio_export,
    simulated_tasks,
)

from handler.datasets.logs import ActionTimes, TaskTimes, read_log
from handler.datasets.logs.label_studio import MAX_REGIONS
from handler.errors import DatasetError


def write(tmp_path: Path, name: str, content: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(content)
    return str(path)


def export_of(tmp_path: Path, tasks: list[dict[str, Any]]) -> str:
    return write(tmp_path, "export.json", orjson.dumps(tasks))


def one_task(annotation: dict[str, Any], predicted: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"id": 1, "predictions": [{"id": 7, "result": predicted or []}], "annotations": [annotation]}


def test_the_label_studio_diff_sorts_every_region_into_its_action(tmp_path: Path) -> None:
    predicted = [box_region(name, 10.0 * i, 10.0, "car") for i, name in enumerate("abcde")]
    submitted = [
        box_region("a", 0.0, 10.0, "car"),  # untouched: accept
        box_region("b", 10.5, 10.0, "car"),  # moved: nudge
        box_region("c", 20.0, 10.0, "truck"),  # another label: relabel
        box_region("d", 35.0, 12.0, "truck"),  # moved and relabeled: relabel (the outcome's action)
        # e is gone: delete
        box_region("new", 50.0, 50.0, "car"),  # drawn
    ]
    annotation = {"result": submitted, "lead_time": 42.0, "parent_prediction": 7}
    log = read_log(export_of(tmp_path, [one_task(annotation, predicted)]))
    assert isinstance(log.times, TaskTimes) and log.skipped == {}
    counts = {action: found.tolist() for action, found in log.times.counts.items()}
    assert counts == {"accept": [1], "nudge": [1], "relabel": [2], "delete": [1], "draw": [1]}
    assert log.times.seconds.tolist() == [42.0]


def test_the_recorded_prediction_stands_in_when_no_parent_is_named(tmp_path: Path) -> None:
    annotation = {"result": [], "lead_time": 3.0, "prediction": {"result": [box_region("a", 1, 1, "car")]}}
    log = read_log(export_of(tmp_path, [{"id": 1, "annotations": [annotation]}]))
    assert isinstance(log.times, TaskTimes) and log.times.counts["delete"].tolist() == [1]


@pytest.mark.parametrize(
    ("annotation", "reason"),
    [
        ({"lead_time": -4.0}, "negative lead_time"),
        ({"lead_time": 1e9}, "lead_time over 4 h"),
        ({"lead_time": "12"}, "no lead_time"),
        ({"lead_time": None}, "no lead_time"),
        ({"was_cancelled": True}, "cancelled (skipped by the labeler)"),
        ({"parent_prediction": 99}, "unlinked (the prediction it names is not in the export)"),
        ({"result": {"not": "a list"}}, "no result list"),
    ],
)
def test_hostile_annotations_are_skipped_and_counted(
    tmp_path: Path, annotation: dict[str, Any], reason: str
) -> None:
    good = {"result": [], "lead_time": 5.0, "parent_prediction": 7}
    log = read_log(export_of(tmp_path, [one_task(good), one_task({**good, **annotation}), "not a task"]))
    assert log.skipped == {reason: 1, "not a task with an annotations list": 1}
    assert isinstance(log.times, TaskTimes) and log.times.seconds.tolist() == [5.0]


def test_a_task_with_a_hundred_thousand_regions_is_skipped_unread(tmp_path: Path) -> None:
    # Short regions keep the file small; a reader that parsed them would fail on their missing value.
    regions = [{"id": f"r{i}"} for i in range(100_000)]
    huge = {"result": regions, "lead_time": 5.0, "parent_prediction": 7}
    good = {"result": [], "lead_time": 5.0, "parent_prediction": 7}
    path = export_of(tmp_path, [one_task(huge), one_task(good, regions), one_task(good)])
    log = read_log(path)
    assert log.skipped == {f"over {MAX_REGIONS} regions": 2}
    assert isinstance(log.times, TaskTimes) and log.times.seconds.tolist() == [5.0]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"[{]", "line 1 column 3: expected a Label Studio JSON export"),
        (b'{"tasks": []}', "expected a Label Studio JSON export, a list of tasks; got a JSON object"),
        (b"\x00\x01 binary", "expected a Label Studio JSON export (a list of tasks) or a CVAT events CSV"),
        (b"image,label\na.jpg,car\n", "or a CVAT events CSV (header with scope"),
        (b"scope,obj_id\ndraw:object,1\n", "line 1: expected CVAT's events columns"),
    ],
)
def test_what_is_no_log_is_one_line_naming_the_file(tmp_path: Path, content: bytes, expected: str) -> None:
    path = write(tmp_path, "log.txt", content)
    with pytest.raises(DatasetError) as raised:
        read_log(path)
    message = str(raised.value)
    assert message.startswith(path) and expected in message and "\n" not in message


def test_a_missing_log_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"cannot read the log: .*missing.json: no such file"):
        read_log(str(tmp_path / "missing.json"))


def test_simulated_export_counts_match_what_the_labelers_did(tmp_path: Path) -> None:
    tasks = simulated_tasks(60)
    log = read_log(export_of(tmp_path, label_studio_export(tasks)))
    assert isinstance(log.times, TaskTimes)
    for action, found in log.times.counts.items():
        assert found.tolist() == [task.actions[action] for task in tasks], action


def test_cvat_events_become_timed_actions_by_its_working_time_rule(tmp_path: Path) -> None:
    events = [
        cvat_event("load:job", "2026-11-30T10:00:00.000Z"),
        # 4 s after the job loaded, a 2.5 s draw: 6.5 s.
        cvat_event("draw:object", "2026-11-30T10:00:04.000Z", 2500),
        # Drag then resize of object 9: one nudge of (1.5 + 0.5) + (0.5 + 1.0) = 3.5 s.
        cvat_event("drag:object", "2026-11-30T10:00:08.000Z", 500, obj_id="9"),
        cvat_event("resize:object", "2026-11-30T10:00:09.000Z", 1000, obj_id="9"),
        # 300 s later (a break, not work): the delete counts its own duration only, 0 s.
        cvat_event("delete:object", "2026-11-30T10:05:10.000Z"),
        # Another user's stream: its first event has no gap before it.
        cvat_event("draw:object", "2026-11-30T10:05:11+00:00", 8000, user_id="2"),
    ]
    log = read_log(write(tmp_path, "events.csv", cvat_events_csv(CVAT_DOCS_COLUMNS, events)))
    assert isinstance(log.times, ActionTimes) and log.unit == "jobs" and log.times.tasks == 1
    assert sorted(log.times.seconds["draw"].tolist()) == [6.5, 8.0]
    assert log.times.seconds["nudge"].tolist() == [3.5]
    assert log.times.seconds["delete"].tolist() == [0.0]
    assert log.times.occurrences["nudge"].tolist() == [1]


def test_cvat_columns_are_found_by_name_and_bad_rows_are_counted(tmp_path: Path) -> None:
    events = [
        cvat_event("draw:object", "2026-11-30T10:00:04", 2500),
        cvat_event("draw:object", "yesterday", 2500),
        cvat_event("draw:object", "2026-11-30T10:00:09", 100, job_id=""),
    ]
    reordered = list(reversed(CVAT_DOCS_COLUMNS))
    log = read_log(write(tmp_path, "events.csv", cvat_events_csv(reordered, events) + b"draw:object\n"))
    assert log.skipped == {
        "unreadable timestamp or negative duration": 1,
        "no job_id": 1,
        "rows with fewer fields than the header": 1,
    }
    assert isinstance(log.times, ActionTimes) and log.times.seconds["draw"].tolist() == [2.5]
