"""Labelers simulated with known seconds per action: Label Studio tasks (a prediction, and the
annotation a labeler made from it with its lead_time) and CVAT events, to calibrate back."""

from __future__ import annotations

import copy
import csv
import io
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np

# The truth the tests fit back: a team somewhat slower than the defaults at everything.
TRUTH = {"accept": 2.2, "nudge": 7.5, "relabel": 5.0, "delete": 3.0, "draw": 21.0}
OVERHEAD = 4.0
# A team's seconds on masks (polygons): fixing an outline and drawing one cost far more than a box.
MASK_TRUTH = {"accept": 2.5, "nudge": 18.0, "relabel": 5.0, "delete": 3.0, "draw": 55.0}
# How a predicted box fares, by share (the rest of a task's boxes are drawn new).
FATES = {"accept": 0.55, "nudge": 0.2, "relabel": 0.1, "delete": 0.15}


def box_region(region_id: str, x: float, y: float, label: str) -> dict[str, Any]:
    """A Label Studio rectangle region, percent coordinates, as its own converters write it."""
    return {
        "id": region_id,
        "type": "rectanglelabels",
        "from_name": "label",
        "to_name": "image",
        "original_width": 640,
        "original_height": 480,
        "image_rotation": 0,
        "value": {"x": x, "y": y, "width": 12.5, "height": 10.0, "rotation": 0, "rectanglelabels": [label]},
    }


def polygon_region(region_id: str, x: float, y: float, label: str) -> dict[str, Any]:
    """A Label Studio polygon region (points in percent), as its editor writes it."""
    points = [[x, y], [x + 12.5, y + 1.0], [x + 10.0, y + 10.0], [x + 1.5, y + 8.0]]
    return {
        "id": region_id,
        "type": "polygonlabels",
        "from_name": "label",
        "to_name": "image",
        "original_width": 640,
        "original_height": 480,
        "image_rotation": 0,
        "value": {"points": points, "closed": True, "polygonlabels": [label]},
    }


# The `origin` Label Studio's editor writes on each region of a submitted annotation, by what the
# labeler did to it.
ORIGIN = {"accept": "prediction", "nudge": "prediction-changed", "relabel": "prediction-changed"}


@dataclass(frozen=True)
class SimulatedTask:
    prediction: list[dict[str, Any]]  # the prediction's result
    annotation: list[dict[str, Any]]  # what the labeler submitted
    lead_time: float
    actions: dict[str, int]  # what the labeler did, by action


def simulated_tasks(
    n: int,
    seed: int = 25,
    noise_seconds: float = 2.0,
    truth: dict[str, float] | None = None,
    masks: bool = False,
) -> list[SimulatedTask]:
    """`n` tasks: 1-7 predicted boxes (polygons, with the editor's `origin`, when `masks`) each,
    every one's fate drawn from FATES, 0-3 new ones; lead_time = OVERHEAD + Σ truth · actions +
    normal noise (never below 0)."""
    truth = truth or (MASK_TRUTH if masks else TRUTH)
    region = polygon_region if masks else box_region
    rng = np.random.default_rng(seed)
    tasks = []
    for task in range(n):
        predicted = [
            region(f"t{task}p{i}", float(rng.uniform(0, 80)), float(rng.uniform(0, 80)), "car")
            for i in range(int(rng.integers(1, 8)))
        ]
        fates = rng.choice(list(FATES), size=len(predicted), p=list(FATES.values()))
        submitted = [_after(shape, str(fate), masks) for shape, fate in zip(predicted, fates, strict=True)]
        drawn = int(rng.poisson(0.8))
        submitted += [
            {**region(f"t{task}n{j}", 5.0 + j, 5.0, "car"), **({"origin": "manual"} if masks else {})}
            for j in range(drawn)
        ]
        actions = {action: int(np.sum(fates == action)) for action in FATES} | {"draw": drawn}
        seconds = OVERHEAD + sum(truth[action] * count for action, count in actions.items())
        lead_time = max(0.0, seconds + float(rng.normal(0, noise_seconds)))
        tasks.append(SimulatedTask(predicted, [r for r in submitted if r is not None], lead_time, actions))
    return tasks


def _after(region: dict[str, Any], fate: str, masks: bool) -> dict[str, Any] | None:
    """The predicted region as the labeler left it (with the editor's `origin` on masks)."""
    if fate == "delete":
        return None
    changed = copy.deepcopy(region)
    value = changed["value"]
    if fate == "nudge" and masks:
        value["points"][1][0] += 1.5  # one vertex dragged
    elif fate == "nudge":
        value["x"] += 1.5
        value["width"] -= 0.8
    if fate == "relabel":
        value["polygonlabels" if masks else "rectanglelabels"] = ["truck"]
    if masks:
        changed["origin"] = ORIGIN[fate]
    return changed


def label_studio_export(tasks: list[SimulatedTask]) -> list[dict[str, Any]]:
    """The tasks as Label Studio's JSON export writes them (the fields the calibration reads)."""
    return [
        {
            "id": number + 1,
            "data": {"image": f"/data/{number}.jpg"},
            "predictions": [{"id": 1000 + number, "result": task.prediction, "model_version": "sim"}],
            "annotations": [
                {
                    "id": 5000 + number,
                    "result": task.annotation,
                    "lead_time": task.lead_time,
                    "was_cancelled": False,
                    "parent_prediction": 1000 + number,
                    "prediction": {},
                }
            ],
        }
        for number, task in enumerate(tasks)
    ]


# CVAT's docs, administration/advanced/analytics.md, "Events log structure": the fields of an
# event, in the docs' order. Written here from the docs, not from the reader.
CVAT_DOCS_COLUMNS = [
    "scope",
    "obj_name",
    "obj_id",
    "obj_val",
    "source",
    "timestamp",
    "count",
    "duration",
    "project_id",
    "task_id",
    "job_id",
    "user_id",
    "user_name",
    "user_email",
    "org_id",
    "org_slug",
    "payload",
]


def cvat_event(scope: str, at: str, duration_ms: int = 0, **fields: str) -> dict[str, str]:
    base = {"scope": scope, "timestamp": at, "duration": str(duration_ms), "count": "1", "source": "client"}
    return base | {"job_id": "3", "task_id": "2", "user_id": "1", "obj_name": "", "obj_id": ""} | fields


def simulated_cvat_events(
    jobs: int, seed: int = 25, truth: dict[str, float] | None = None
) -> list[dict[str, str]]:
    """Each job: a user loads it, then draws, nudges (a drag then a resize of one object) and
    deletes boxes, each action taking its true seconds (±30 %), part of it as the gap before the
    event and the rest as its duration; now and then a break (> 100 s) and a frame change."""
    truth = truth or TRUTH
    rng = np.random.default_rng(seed)
    events = []
    for job in range(jobs):
        clock = 1_764_000_000.0 + job * 10_000
        events.append(cvat_event("load:job", _stamp(clock), job_id=str(job)))
        for action in rng.choice(["draw", "nudge", "delete"], size=int(rng.integers(4, 12))):
            seconds = truth[str(action)] * float(rng.uniform(0.7, 1.3))
            if rng.random() < 0.1:  # a break (not work, by CVAT's rule), then back to the frame
                clock += 300.0
                events.append(cvat_event("change:frame", _stamp(clock), job_id=str(job)))
            gap, duration = 0.4 * seconds, 0.6 * seconds
            if action == "nudge":
                obj = str(rng.integers(1, 10**6))
                clock += gap / 2
                events.append(
                    cvat_event("drag:object", _stamp(clock), int(duration * 500), obj_id=obj, job_id=str(job))
                )
                clock += duration / 2 + gap / 2
                events.append(
                    cvat_event(
                        "resize:object", _stamp(clock), int(duration * 500), obj_id=obj, job_id=str(job)
                    )
                )
                clock += duration / 2
                continue
            scope = {"draw": "draw:object", "delete": "delete:object"}[str(action)]
            clock += gap if action == "draw" else seconds
            events.append(
                cvat_event(
                    scope, _stamp(clock), int(duration * 1000) if action == "draw" else 0, job_id=str(job)
                )
            )
            clock += duration if action == "draw" else 0.0
    return events


def _stamp(seconds: float) -> str:
    return (
        datetime.fromtimestamp(seconds, tz=timezone.utc)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def cvat_events_csv(columns: list[str], events: list[dict[str, str]]) -> bytes:
    """A CVAT events export: `columns` in order, each event's missing fields empty."""
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=columns, restval="", lineterminator="\n")
    writer.writeheader()
    writer.writerows(events)
    return text.getvalue().encode("utf-8")
