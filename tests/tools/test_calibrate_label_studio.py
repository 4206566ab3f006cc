"""Done-when of issue 25: a real Label Studio server's own export, calibrated back.

Simulated labelers with known seconds per action (tests/helpers/labeler_logs.py) work through the
server's API the way its editor does: each task is imported with a prediction, and each annotation
is created from that prediction (`parent_prediction`), keeping the ids of the regions it leaves in
place, with its `lead_time`. The project is then exported through the export API, and the fit of
that export must come within 15 % of the truth for every action at least 50 tasks show.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from helpers.label_studio_server import (
    LabelStudioServer,
    create_project,
    export,
    import_tasks,
    rectangle_config,
)
from helpers.labeler_logs import OVERHEAD, TRUTH, SimulatedTask, simulated_tasks

from handler.calibrate import calibrate, calibration_lines
from handler.engine.timecost import ACTIONS

if TYPE_CHECKING:
    from label_studio_sdk import LabelStudio

TASKS = 180
SUPPORT_FOR_THE_15_PERCENT = 50


def annotate(client: LabelStudio, tasks: list[SimulatedTask], project_id: int) -> None:
    """Import the tasks with their predictions, then submit each labeler's annotation; plus one
    cancelled and one unlinked annotation, which the calibration must skip and count."""
    with_predictions = [
        {
            "data": {"image": f"/data/{n}.jpg"},
            "predictions": [{"result": task.prediction, "model_version": "sim"}],
        }
        for n, task in enumerate(tasks)
    ]
    imported = import_tasks(client, project_id, with_predictions)
    predictions = _prediction_ids(client, project_id)
    for task_id, task in zip(imported, tasks, strict=True):
        client.annotations.create(
            id=task_id,
            result=task.annotation,
            lead_time=task.lead_time,
            parent_prediction=predictions[task_id],
            was_cancelled=False,
        )
    extra = import_tasks(client, project_id, [{"data": {"image": "/data/extra.jpg"}}])[-1:]
    client.annotations.create(id=extra[0], result=[], lead_time=9.0)  # no prediction: unlinked
    client.annotations.create(id=imported[0], result=[], lead_time=3.0, was_cancelled=True)


def _prediction_ids(client: LabelStudio, project_id: int) -> dict[int, int]:
    """Each task's prediction id, as the export reports them."""
    document: list[dict[str, Any]] = json.loads(export(client, project_id))
    return {task["id"]: task["predictions"][0]["id"] for task in document if task["predictions"]}


@pytest.fixture(scope="module")
def exported(
    tmp_path_factory: pytest.TempPathFactory, label_studio: LabelStudioServer
) -> tuple[Path, list[SimulatedTask]]:
    tasks = simulated_tasks(TASKS, seed=2511)
    client = label_studio.client()
    project_id = create_project(client, rectangle_config(["car", "truck"]), title="calibration")
    annotate(client, tasks, project_id)
    path = tmp_path_factory.mktemp("label-studio") / "label_studio_export.json"
    path.write_bytes(export(client, project_id))
    return path, tasks


def test_the_export_keeps_what_the_calibration_reads(exported: tuple[Path, list[SimulatedTask]]) -> None:
    path, tasks = exported
    document = json.loads(path.read_text())
    annotations = [a for task in document for a in task["annotations"]]
    linked = [a for a in annotations if a.get("parent_prediction") and not a["was_cancelled"]]
    assert len(linked) == TASKS
    assert sorted(a["lead_time"] for a in linked) == pytest.approx(sorted(t.lead_time for t in tasks))


def test_a_real_label_studio_export_calibrates_back_to_the_truth(
    exported: tuple[Path, list[SimulatedTask]],
) -> None:
    path, _ = exported
    costs = calibrate([str(path)])
    report = "\n".join(calibration_lines(costs))
    print(f"\n{report}\ntruth: {TRUTH}, overhead {OVERHEAD} s")  # the closing note's table
    assert costs.fit is not None and costs.fit.tasks == TASKS, report
    assert costs.fit.skipped == {
        "cancelled (skipped by the labeler)": 1,
        "unlinked (no prediction it started from)": 1,
    }, report
    checked = [a for a in ACTIONS if costs.fit.actions[a].support >= SUPPORT_FOR_THE_15_PERCENT]
    assert checked == list(ACTIONS), report  # the simulation gives every action enough tasks
    for action in checked:
        assert getattr(costs, action) == pytest.approx(TRUTH[action], rel=0.15), report
        low, high = costs.fit.actions[action].interval
        assert low <= getattr(costs, action) <= high, report
