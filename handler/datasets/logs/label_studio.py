"""Label Studio's JSON export as a log: per submitted annotation, what the labeler did to the
prediction they started from, and `lead_time`, the seconds the annotation took.

The prediction shown is the one `parent_prediction` names among the task's `predictions`, else
the `prediction` the annotation recorded (Label Studio stores the prediction viewed at the time,
label_studio/tasks/models.py). The diff is by region `id`, which Label Studio keeps when a
labeler starts from a prediction: same id, label and box = accept; same id and label, another
box = nudge; same id, another label = relabel; a predicted id gone = delete; a new id = draw.
Boxes compare in the export's own percent coordinates (no image size needed).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import orjson

from handler.boxes import FloatArray, IntArray
from handler.datasets.logs import LabelerLog, LogFormat, TaskTimes
from handler.errors import DatasetError

# Geometry the diff compares, in the export's percent of the image; rotation in degrees.
GEOMETRY: Final = ("x", "y", "width", "height", "rotation")
# Two boxes are the same box within this many percent of the image (sub-pixel up to 10k px):
# an untouched region comes back as the same numbers, give or take the float's last digits.
SAME_BOX_PERCENT: Final = 0.01
# A lead time above this is not one sitting at one image (a task left open overnight): skipped.
MAX_LEAD_SECONDS: Final = 4 * 3600.0
# An annotation with more regions than this is not a labeler's work (an import): skipped unread.
MAX_REGIONS: Final = 10_000
PRED, SUBMITTED = 0, 1


@dataclass
class _Regions:
    """Region columns of every kept annotation, both sides, gathered before one vectorised diff."""

    row: list[int] = field(default_factory=list)
    side: list[int] = field(default_factory=list)
    region_id: list[str] = field(default_factory=list)
    label: list[str] = field(default_factory=list)
    geometry: list[list[float]] = field(default_factory=list)

    def add(self, row: int, side: int, result: list[Any]) -> None:
        boxes = [region for region in result if _is_box(region)]
        self.row += [row] * len(boxes)
        self.side += [side] * len(boxes)
        self.region_id += [str(region.get("id")) for region in boxes]
        self.label += [_label(region["value"]) for region in boxes]
        self.geometry += [[_number(region["value"].get(key)) for key in GEOMETRY] for region in boxes]


def _is_box(region: Any) -> bool:
    value = region.get("value") if isinstance(region, dict) else None
    return isinstance(value, dict) and all(isinstance(value.get(key), int | float) for key in GEOMETRY[:4])


def _label(value: dict[str, Any]) -> str:
    labels = value.get("rectanglelabels") or value.get("labels") or [""]
    return str(labels[0]) if isinstance(labels, list) and labels else ""


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _shown_prediction(task: dict[str, Any], annotation: dict[str, Any]) -> list[Any] | None:
    """The result of the prediction the labeler started from; None when the annotation names none."""
    parent = annotation.get("parent_prediction")
    for prediction in task.get("predictions") or ():
        if isinstance(prediction, dict) and parent is not None and prediction.get("id") == parent:
            result = prediction.get("result")
            return result if isinstance(result, list) else None
    recorded = annotation.get("prediction")
    result = recorded.get("result") if isinstance(recorded, dict) else None
    return result if isinstance(result, list) else None


def _skip_reason(annotation: Any) -> str | None:
    """Why an annotation tells nothing about the seconds per action (None: it does)."""
    if not isinstance(annotation, dict):
        return "not an annotation object"
    if annotation.get("was_cancelled"):
        return "cancelled (skipped by the labeler)"
    lead = annotation.get("lead_time")
    if isinstance(lead, bool) or not isinstance(lead, int | float) or not math.isfinite(lead):
        return "no lead_time"
    if lead < 0:
        return "negative lead_time"
    if lead > MAX_LEAD_SECONDS:
        return f"lead_time over {MAX_LEAD_SECONDS / 3600:.0f} h"
    result = annotation.get("result")
    if not isinstance(result, list):
        return "no result list"
    if len(result) > MAX_REGIONS:
        return f"over {MAX_REGIONS} regions"
    return None


def _annotations(where: str, tasks: Any) -> tuple[_Regions, list[float], Counter[str]]:
    if not isinstance(tasks, list):
        raise DatasetError(
            f"{where}: expected a Label Studio JSON export, a list of tasks; got a JSON "
            f"{type(tasks).__name__}"
        )
    regions, seconds, skipped = _Regions(), list[float](), Counter[str]()
    for task in tasks:
        annotations = task.get("annotations") if isinstance(task, dict) else None
        if not isinstance(annotations, list):
            skipped["not a task with an annotations list"] += 1
            continue
        for annotation in annotations:
            reason = _skip_reason(annotation)
            shown = _shown_prediction(task, annotation) if reason is None else None
            if reason is None and shown is None:
                reason = "unlinked (no prediction it started from)"
            if reason is None and shown is not None and len(shown) > MAX_REGIONS:
                reason = f"over {MAX_REGIONS} regions"
            if reason is not None or shown is None:
                skipped[reason or ""] += 1
                continue
            regions.add(len(seconds), PRED, shown)
            regions.add(len(seconds), SUBMITTED, annotation["result"])
            seconds.append(float(annotation["lead_time"]))
    return regions, seconds, skipped


def action_counts(regions: _Regions, rows: int) -> dict[str, IntArray]:
    """Each annotation's accepts, nudges, relabels, deletes and draws: one diff of all regions."""
    row, side = np.asarray(regions.row, dtype=np.int64), np.asarray(regions.side, dtype=np.int64)
    geometry = np.asarray(regions.geometry, dtype=np.float64).reshape(-1, len(GEOMETRY))
    _, region = np.unique(np.asarray(regions.region_id, dtype=str), return_inverse=True)
    _, label = np.unique(np.asarray(regions.label, dtype=str), return_inverse=True)
    # 1. One key per (annotation, region id); a region id listed twice on a side counts once.
    key = row * (int(region.max(initial=0)) + 1) + region
    pred = _first_per_key(key, side == PRED)
    submitted = _first_per_key(key, side == SUBMITTED)
    # 2. Each submitted region's predicted region of the same key, if any.
    order = np.argsort(key[pred], kind="stable")
    sorted_keys = key[pred][order]
    position = np.minimum(np.searchsorted(sorted_keys, key[submitted]), max(len(sorted_keys) - 1, 0))
    kept = (sorted_keys[position] == key[submitted]) if len(sorted_keys) else np.zeros(len(submitted), bool)
    mate, paired = pred[order[position[kept]]], submitted[kept]
    # 3. Sort each pair into accept / nudge / relabel; the rest are deletes and draws.
    same_label = label[mate] == label[paired]
    same_box = np.all(np.abs(geometry[mate] - geometry[paired]) <= SAME_BOX_PERCENT, axis=1)
    counted = {
        "accept": row[paired[same_label & same_box]],
        "nudge": row[paired[same_label & ~same_box]],
        "relabel": row[paired[~same_label]],
        "delete": row[np.setdiff1d(pred, mate)],
        "draw": row[submitted[~kept]],
    }
    return {action: np.bincount(found, minlength=rows).astype(np.int64) for action, found in counted.items()}


def _first_per_key(key: IntArray, mask: np.ndarray[Any, np.dtype[np.bool_]]) -> IntArray:
    """Indices of the regions in `mask`, the first of each key."""
    chosen = np.flatnonzero(mask)
    _, first = np.unique(key[chosen], return_index=True)
    found: IntArray = chosen[np.sort(first)]
    return found


def read(where: str, content: bytes) -> LabelerLog:
    try:
        tasks = orjson.loads(content)
    except orjson.JSONDecodeError as error:
        raise DatasetError(
            f"{where}: line {error.lineno} column {error.colno}: expected a Label Studio JSON export "
            f"({error.msg})"
        ) from None
    regions, seconds, skipped = _annotations(where, tasks)
    times: FloatArray = np.asarray(seconds, dtype=np.float64)
    return LabelerLog(
        log_format=FORMAT.name,
        unit="tasks",
        times=TaskTimes(action_counts(regions, len(seconds)), times),
        skipped=dict(skipped),
    )


def _accepts(head: bytes) -> bool:
    return head.startswith((b"[", b"{"))


FORMAT: Final = LogFormat(
    name="label-studio-export",
    looks_like="a Label Studio JSON export (a list of tasks)",
    accepts=_accepts,
    read=read,
)
