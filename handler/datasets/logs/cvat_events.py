"""CVAT's analytics events (`/api/events/export`, CSV) as a log: the seconds of each timed action.

Columns as CVAT's docs list them (administration/advanced/analytics.md, "Events log structure"):
scope, obj_name, obj_id, obj_val, source, timestamp, count, duration (ms), project_id, task_id,
job_id, user_id, user_name, user_email, org_id, org_slug, payload. The reader needs the few in
REQUIRED and finds them by name, so an export with the columns in another order reads the same.

An action's seconds follow CVAT's own working-time rule: the gap since the end of the user's
previous event in the same job, counted when it is at most 100 s (a longer gap is a break), plus
the event's own duration. The client events that are labeler actions: `draw:object` (draw),
`drag:object` and `resize:object` (nudge: consecutive ones on the same object are one nudge),
`delete:object` (delete). CVAT logs no event for accepting a box or changing its label, so those
two keep their defaults. The resampling unit is the job.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from datetime import datetime, timezone
from typing import Final

import numpy as np

from handler.boxes import FloatArray, IntArray
from handler.datasets.logs import ActionTimes, LabelerLog, LogFormat
from handler.errors import DatasetError

REQUIRED: Final = ("scope", "obj_id", "timestamp", "count", "duration", "job_id", "user_id")
ACTION_OF_SCOPE: Final = {
    "draw:object": "draw",
    "drag:object": "nudge",
    "resize:object": "nudge",
    "delete:object": "delete",
}
# CVAT's working-time rule: a gap between two events longer than this is not work.
MAX_GAP_SECONDS: Final = 100.0


def _rows(where: str, content: bytes) -> tuple[dict[str, int], list[list[str]]]:
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise DatasetError(f"{where}: byte {error.start}: expected a UTF-8 CVAT events CSV") from None
    # An event's payload is a JSON text of any length: no field is longer than the file.
    csv.field_size_limit(max(csv.field_size_limit(), len(text)))
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader, [])
        columns = {name.strip(): index for index, name in enumerate(header)}
        missing = [name for name in REQUIRED if name not in columns]
        if missing:
            raise DatasetError(
                f"{where}: line 1: expected CVAT's events columns ({', '.join(REQUIRED)}, ...); "
                f"missing {', '.join(missing)}"
            )
        return columns, [row for row in reader if row]
    except csv.Error as error:
        raise DatasetError(f"{where}: line {reader.line_num}: expected CSV fields ({error})") from None


def _seconds_since_epoch(stamps: list[str]) -> FloatArray:
    """ISO 8601 timestamps (`Z`, offsets or naive UTC) as seconds; NaN where one cannot be read."""

    def parse(stamp: str) -> float:
        try:
            moment = datetime.fromisoformat(stamp.strip().replace("Z", "+00:00"))
        except ValueError:
            return float("nan")
        return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()

    return np.asarray([parse(stamp) for stamp in stamps], dtype=np.float64)


def _numbers(values: list[str], default: float) -> FloatArray:
    """The numbers of a column; `default` where a field is empty or not a number."""

    def parse(text: str) -> float:
        try:
            return float(text)
        except ValueError:
            return float("nan")

    parsed = np.asarray([parse(value) for value in values], dtype=np.float64)
    return np.where(np.isfinite(parsed), parsed, default)


def read(where: str, content: bytes) -> LabelerLog:
    columns, rows = _rows(where, content)
    width = max(columns.values()) + 1
    short = sum(len(row) < width for row in rows)
    rows = [row for row in rows if len(row) >= width]
    column = {name: [row[columns[name]] for row in rows] for name in REQUIRED}
    skipped = Counter[str]()
    if short:
        skipped["rows with fewer fields than the header"] = short
    start = _seconds_since_epoch(column["timestamp"])
    duration = _numbers(column["duration"], 0.0) / 1000.0  # milliseconds, per CVAT's docs
    readable = np.isfinite(start) & (duration >= 0)
    has_job = np.asarray([bool(job.strip()) for job in column["job_id"]], dtype=bool)
    _count(skipped, "unreadable timestamp or negative duration", ~readable)
    _count(skipped, "no job_id", readable & ~has_job)
    keep = np.flatnonzero(readable & has_job)
    scope = np.asarray(column["scope"], dtype=str)[keep]
    stream_key = np.char.add(np.asarray(column["user_id"], dtype=str), "\x00")
    stream_key = np.char.add(stream_key, np.asarray(column["job_id"], dtype=str))[keep]
    _, job = np.unique(np.asarray(column["job_id"], dtype=str)[keep], return_inverse=True)
    times = _action_times(
        scope,
        np.asarray(column["obj_id"], dtype=str)[keep],
        stream_key,
        start[keep],
        duration[keep],
        np.maximum(_numbers(column["count"], 1.0)[keep], 1.0).astype(np.int64),
        job.astype(np.int64),
    )
    return LabelerLog(log_format=FORMAT.name, unit="jobs", times=times, skipped=dict(skipped))


def _count(skipped: Counter[str], reason: str, mask: np.ndarray) -> None:  # type: ignore[type-arg]
    if mask.any():
        skipped[reason] = int(mask.sum())


def _action_times(
    scope: np.ndarray,  # type: ignore[type-arg]
    obj_id: np.ndarray,  # type: ignore[type-arg]
    stream_key: np.ndarray,  # type: ignore[type-arg]
    start: FloatArray,
    duration: FloatArray,
    count: IntArray,
    job: IntArray,
) -> ActionTimes:
    # 1. Each user's events in a job, in time order: the working gap before each event.
    order = np.lexsort((start, stream_key))
    scope, obj_id, stream_key = scope[order], obj_id[order], stream_key[order]
    start, duration, count, job = start[order], duration[order], count[order], job[order]
    same_stream = _after_first(stream_key[1:] == stream_key[:-1], False, len(scope))
    gap = _after_first(start[1:] - (start[:-1] + duration[:-1]), 0.0, len(scope))
    worked = np.where(same_stream & (gap >= 0) & (gap <= MAX_GAP_SECONDS), gap, 0.0) + duration
    action = np.asarray([ACTION_OF_SCOPE.get(name, "") for name in scope.tolist()], dtype=object)
    # 2. A drag then a resize of the same object is one nudge: runs of nudges on one object.
    nudge = action == "nudge"
    continues = _after_first(
        nudge[1:] & nudge[:-1] & same_stream[1:] & (obj_id[1:] == obj_id[:-1]), False, len(scope)
    )
    continues &= np.char.str_len(obj_id.astype(str)) > 0
    run = np.cumsum(~continues) - 1
    run_seconds = np.bincount(run, weights=worked)
    first = ~continues
    seconds, occurrences, task = {}, {}, {}
    for name in sorted(set(ACTION_OF_SCOPE.values())):
        chosen = first & (action == name)
        seconds[name] = run_seconds[run[chosen]]
        occurrences[name] = np.where(nudge[chosen], 1, count[chosen]).astype(np.int64)
        task[name] = job[chosen]
    tasks = int(job.max(initial=-1)) + 1
    return ActionTimes(seconds=seconds, occurrences=occurrences, task=task, tasks=tasks)


def _after_first(pairs: np.ndarray, first: float, events: int) -> np.ndarray:  # type: ignore[type-arg]
    """Per event, a value of it and the event before: `first` for the first (no events, none)."""
    values: np.ndarray = np.r_[first, pairs][:events]  # type: ignore[type-arg]
    return values


def _accepts(head: bytes) -> bool:
    first_line = head.split(b"\n", 1)[0].decode("utf-8", "replace")
    return "scope" in [name.strip() for name in first_line.split(",")]


FORMAT: Final = LogFormat(
    name="cvat-events",
    looks_like=f"a CVAT events CSV (header with {', '.join(REQUIRED)})",
    accepts=_accepts,
    read=read,
)
