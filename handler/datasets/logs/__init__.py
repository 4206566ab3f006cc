"""Labeling tools' logs, read for the seconds labelers spend per action.

A log is read like a dataset: one module per tool's format, detected from the content, each
listed once in LOG_FORMATS. A reader gives the actions it saw by name (`accept`, `nudge`,
`relabel`, `delete`, `draw`); the engine fits the seconds (engine/calibration.py). What a reader
cannot use (a cancelled annotation, an absurd time) is skipped and counted by reason, never
guessed; what is not a log of its format at all is one DatasetError line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import msgspec
from msgspec import field

from handler.boxes import FloatArray, IntArray
from handler.engine.timecost import Shape
from handler.errors import DatasetError, StorageError
from handler.storage.local import read_local_file


class TaskTimes(msgspec.Struct, frozen=True):
    """Per task: how often each action was done (by action name, (n,) each) and its time (n,)."""

    counts: dict[str, IntArray]
    seconds: FloatArray


class ActionTimes(msgspec.Struct, frozen=True):
    """Timed actions, by action name: each occurrence's seconds, occurrences and task (0..tasks-1)."""

    seconds: dict[str, FloatArray]
    occurrences: dict[str, IntArray]
    task: dict[str, IntArray]
    tasks: int


class LabelerLog(msgspec.Struct, frozen=True):
    """What a log says about the labelers' time, and what of it was skipped (reason -> how many)."""

    log_format: str
    unit: str  # what a task is in this tool: the resampling unit of the fit
    times: TaskTimes | ActionTimes
    skipped: dict[str, int] = field(default_factory=dict)
    assumed: dict[str, int] = field(default_factory=dict)  # records read by an assumption (how -> how many)
    shape: Shape = "boxes"  # what the labelers drew: a mask log fits a mask's seconds


class LogFormat(msgspec.Struct, frozen=True):
    """A tool's log: `accepts(head)` on the file's first bytes, `read(where, content)`;
    `looks_like` says what the file should be, for the message when no format accepts it."""

    name: str
    looks_like: str
    accepts: Callable[[bytes], bool]
    read: Callable[[str, bytes], LabelerLog]


def _formats() -> tuple[LogFormat, ...]:
    from handler.datasets.logs import cvat_events, label_studio

    return (label_studio.FORMAT, cvat_events.FORMAT)


HEAD_BYTES: Final = 4096


def read_log(path: str) -> LabelerLog:
    """The log at `path`, in the format its content is of."""
    try:
        content = read_local_file(path, "log")
    except StorageError as error:  # refused by the OS, not a regular file, too large
        raise DatasetError(f"cannot read the log: {error}") from None
    head = content[:HEAD_BYTES].lstrip(b"\xef\xbb\xbf \t\r\n")
    for log_format in _formats():
        if log_format.accepts(head):
            return log_format.read(path, content)
    expected = " or ".join(log_format.looks_like for log_format in _formats())
    raise DatasetError(f"{path}: expected {expected}; it is neither")
