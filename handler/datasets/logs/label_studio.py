"""Label Studio's JSON export as a log: per submitted annotation, what the labeler did to the
prediction they started from, and `lead_time`, the seconds the annotation took.

The prediction shown is the one `parent_prediction` names among the task's `predictions`, else
the `prediction` the annotation recorded (Label Studio stores the prediction viewed at the time,
label_studio/tasks/models.py). The diff is by region `id`, which Label Studio keeps when a
labeler starts from a prediction: same id, label and box = accept; same id and label, another
box = nudge; same id, another label = relabel; a predicted id gone = delete; a new id = draw.
Boxes compare in the export's own percent coordinates (no image size needed). A mask region (a
polygon's `points`, a brush's `rle`) is diffed the same way, its outline compared instead of a
box: fixing it is the nudge. Where the editor wrote a region's `origin`, `prediction-changed`
says the labeler edited it even when the numbers came back the same. A log whose regions are
mostly masks fits a mask's seconds (`LabelerLog.shape`).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Final

import msgspec
import numpy as np
import orjson
from msgspec import field

from handler.boxes import FloatArray, IntArray
from handler.datasets.jsondoc import json_type
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
# The `origin` Label Studio's editor writes on a region taken from a prediction and then edited.
EDITED_ORIGIN: Final = "prediction-changed"
# How an annotation without a link to a prediction is read when its task has exactly one.
ONLY_PREDICTION: Final = "started from the task's only prediction (no parent_prediction)"


class _Regions(msgspec.Struct):
    """Region columns of every kept annotation, both sides, gathered before one vectorised diff."""

    row: list[int] = field(default_factory=list)
    side: list[int] = field(default_factory=list)
    region_id: list[str] = field(default_factory=list)
    label: list[str] = field(default_factory=list)
    geometry: list[list[float]] = field(default_factory=list)
    outline: list[str] = field(default_factory=list)  # a mask's points or runs, as text; "" for a box
    origin: list[str] = field(default_factory=list)

    def add(self, row: int, side: int, result: list[Any]) -> None:
        shapes = [region for region in result if _is_box(region) or _outline(region) is not None]
        self.row += [row] * len(shapes)
        self.side += [side] * len(shapes)
        self.region_id += [str(region.get("id")) for region in shapes]
        self.label += [_label(region["value"]) for region in shapes]
        self.geometry += [[_number(region["value"].get(key)) for key in GEOMETRY] for region in shapes]
        self.outline += [_outline(region) or "" for region in shapes]
        self.origin += [str(region.get("origin", "")) for region in shapes]

    @property
    def masks(self) -> bool:
        """Whether most regions are masks."""
        return 2 * sum(map(bool, self.outline)) > len(self.outline)


def _is_box(region: Any) -> bool:
    value = region.get("value") if isinstance(region, dict) else None
    return isinstance(value, dict) and all(isinstance(value.get(key), int | float) for key in GEOMETRY[:4])


def _outline(region: Any) -> str | None:
    """A mask region's outline as comparable text: a polygon's points, to SAME_BOX_PERCENT, or a
    brush's runs; None for a region that is not a mask."""
    value = region.get("value") if isinstance(region, dict) else None
    if not isinstance(value, dict):
        return None
    shape = value.get("points", value.get("rle"))
    if not isinstance(shape, list) or not shape:
        return None
    if "points" not in value:
        return orjson.dumps(shape).decode()
    try:
        points = np.asarray(shape, dtype=np.float64)
    except (TypeError, ValueError):  # points that are not numbers: not a shape the diff can read
        return None
    return np.round(points / SAME_BOX_PERCENT).astype(np.int64).tobytes().hex()


def _label(value: dict[str, Any]) -> str:
    labels = (
        value.get("rectanglelabels")
        or value.get("polygonlabels")
        or value.get("brushlabels")
        or value.get("labels")
        or [""]
    )
    return str(labels[0]) if isinstance(labels, list) and labels else ""


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _predictions(task: dict[str, Any]) -> list[dict[str, Any]]:
    """The task's predictions written in full, with a result list (an id alone tells nothing)."""
    listed = task.get("predictions")
    return [
        p
        for p in (listed if isinstance(listed, list) else ())
        if isinstance(p, dict) and isinstance(p.get("result"), list)
    ]


def _shown_prediction(
    task: dict[str, Any], annotation: dict[str, Any]
) -> tuple[list[Any] | None, str | None]:
    """The result of the prediction the labeler started from, and how it was found: the one
    `parent_prediction` names, else the one the annotation recorded, else the task's only
    prediction (`ONLY_PREDICTION`: an annotation imported beside it, or a project migrated, has no
    link); (None, why) when none can be told."""
    parent = annotation.get("parent_prediction")
    candidates = _predictions(task)
    named = [p for p in candidates if parent is not None and p.get("id") == parent]
    if named:
        return named[0]["result"], None
    recorded = annotation.get("prediction")
    result = recorded.get("result") if isinstance(recorded, dict) else None
    if isinstance(result, list):
        return result, None
    if parent is not None:
        return None, "unlinked (the prediction it names is not in the export)"
    if len(candidates) == 1:
        return candidates[0]["result"], ONLY_PREDICTION
    if candidates:
        return None, f"unlinked among {len(candidates)} predictions (none named as started from)"
    return None, "unlinked (no prediction it started from)"


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


def _annotations(where: str, tasks: Any) -> tuple[_Regions, list[float], Counter[str], Counter[str]]:
    if not isinstance(tasks, list):
        raise DatasetError(
            f"{where}: expected a Label Studio JSON export, a list of tasks; got a JSON {json_type(tasks)}"
        )
    regions, seconds, skipped, assumed = _Regions(), list[float](), Counter[str](), Counter[str]()
    for task in tasks:
        annotations = task.get("annotations") if isinstance(task, dict) else None
        if not isinstance(annotations, list):
            skipped["not a task with an annotations list"] += 1
            continue
        for annotation in annotations:
            reason = _skip_reason(annotation)
            shown, found_by = _shown_prediction(task, annotation) if reason is None else (None, None)
            if reason is None and shown is None:
                reason = found_by
            if reason is None and shown is not None and len(shown) > MAX_REGIONS:
                reason = f"over {MAX_REGIONS} regions"
            if reason is not None or shown is None:
                skipped[reason or ""] += 1
                continue
            regions.add(len(seconds), PRED, shown)
            regions.add(len(seconds), SUBMITTED, annotation["result"])
            seconds.append(float(annotation["lead_time"]))
            if found_by is not None:
                assumed[found_by] += 1
    return regions, seconds, skipped, assumed


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
    outline, origin = np.asarray(regions.outline, dtype=object), np.asarray(regions.origin, dtype=object)
    same_box = (
        np.all(np.abs(geometry[mate] - geometry[paired]) <= SAME_BOX_PERCENT, axis=1)
        & (outline[mate] == outline[paired])
        & (origin[paired] != EDITED_ORIGIN)
    )
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
    regions, seconds, skipped, assumed = _annotations(where, tasks)
    times: FloatArray = np.asarray(seconds, dtype=np.float64)
    return LabelerLog(
        log_format=FORMAT.name,
        unit="tasks",
        times=TaskTimes(action_counts(regions, len(seconds)), times),
        skipped=dict(skipped),
        assumed=dict(assumed),
        shape="masks" if regions.masks else "boxes",
    )


def _accepts(head: bytes) -> bool:
    return head.startswith((b"[", b"{"))


FORMAT: Final = LogFormat(
    name="label-studio-export",
    looks_like="a Label Studio JSON export (a list of tasks)",
    accepts=_accepts,
    read=read,
)
