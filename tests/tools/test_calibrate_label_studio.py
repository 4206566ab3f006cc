"""A real Label Studio server's own export, calibrated back.

Simulated labelers with known seconds per action (tests/helpers/labeler_logs.py) work through the
server's API the way its editor does: each task is imported with a prediction, and each annotation
is created from that prediction (`parent_prediction`), keeping the ids of the regions it leaves in
place, with its `lead_time`. The project is then exported through the export API, and the fit of
that export must come within 15 % of the truth for every action at least 50 tasks show.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.label_studio_prepared import (
    CALIBRATION_EXPORT,
    CALIBRATION_TASKS,
    MASK_CALIBRATION_TASKS,
    TWO_MODEL_TASKS,
    calibration_tasks,
)
from helpers.labeler_logs import MASK_TRUTH, OVERHEAD, TRUTH, SimulatedTask

from handler.calibrate import calibrate, calibration_lines
from handler.datasets.logs.label_studio import ONLY_PREDICTION
from handler.engine.timecost import ACTIONS

SUPPORT_FOR_THE_15_PERCENT = 50


@pytest.fixture(scope="module")
def exported(label_studio_prepared: Callable[[str], Path]) -> tuple[Path, list[SimulatedTask]]:
    """The project helpers/label_studio_prepared.py `calibration` made, exported, and its tasks."""
    return label_studio_prepared("calibration") / CALIBRATION_EXPORT, calibration_tasks()


def test_the_export_keeps_what_the_calibration_reads(exported: tuple[Path, list[SimulatedTask]]) -> None:
    path, tasks = exported
    document = json.loads(path.read_text())
    annotations = [a for task in document for a in task["annotations"]]
    linked = [a for a in annotations if a.get("parent_prediction") and not a["was_cancelled"]]
    assert len(linked) == CALIBRATION_TASKS
    assert sorted(a["lead_time"] for a in linked) == pytest.approx(sorted(t.lead_time for t in tasks))


def test_a_real_label_studio_export_calibrates_back_to_the_truth(
    exported: tuple[Path, list[SimulatedTask]],
) -> None:
    path, _ = exported
    costs = calibrate([str(path)])
    report = "\n".join(calibration_lines(costs))
    print(f"\n{report}\ntruth: {TRUTH}, overhead {OVERHEAD} s")  # the closing note's table
    assert costs.fit is not None and costs.fit.tasks == CALIBRATION_TASKS, report
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


def test_a_project_imported_with_its_predictions_calibrates_from_the_only_one(
    label_studio_prepared: Callable[[str], Path],
) -> None:
    """A migrated project: annotations imported beside the predictions name none as their start.
    Each task with one prediction is read as started from it, and said so; a task with two stays
    skipped, with why."""
    path = label_studio_prepared("calibration-imported") / CALIBRATION_EXPORT
    document = json.loads(path.read_text())
    assert not any(a.get("parent_prediction") for task in document for a in task["annotations"])
    costs = calibrate([str(path)])
    report = "\n".join(calibration_lines(costs))
    print(f"\n{report}\ntruth: {TRUTH}, overhead {OVERHEAD} s")  # the closing note's table
    assert costs.fit is not None and costs.fit.tasks == CALIBRATION_TASKS, report
    assert costs.fit.assumed == {ONLY_PREDICTION: CALIBRATION_TASKS}, report
    assert costs.fit.skipped == {"unlinked among 2 predictions (none named as started from)": TWO_MODEL_TASKS}
    assert f"taken: {CALIBRATION_TASKS} {ONLY_PREDICTION}" in report.splitlines()[0]
    for action in ACTIONS:
        assert getattr(costs, action) == pytest.approx(TRUTH[action], rel=0.15), report


def test_a_real_label_studio_export_of_polygons_calibrates_a_mask_s_seconds_back(
    label_studio_prepared: Callable[[str], Path],
) -> None:
    """Polygons accepted, fixed, relabelled, deleted and drawn through the server, each region
    with the editor's `origin`: the server keeps it, and the fit comes back to the mask truth."""
    path = label_studio_prepared("calibration-masks") / CALIBRATION_EXPORT
    document = json.loads(path.read_text())
    regions = [r for task in document for a in task["annotations"] for r in a["result"]]
    assert {r["type"] for r in regions} == {"polygonlabels"} and all("origin" in r for r in regions)
    costs = calibrate([str(path)])
    report = "\n".join(calibration_lines(costs))
    print(f"\n{report}\ntruth: {MASK_TRUTH}, overhead {OVERHEAD} s")  # the closing note's table
    assert costs.shape == "masks" and costs.fit is not None, report
    assert costs.fit.tasks == MASK_CALIBRATION_TASKS and not costs.fit.skipped, report
    for action in ACTIONS:
        assert costs.fit.actions[action].support >= SUPPORT_FOR_THE_15_PERCENT, report
        assert getattr(costs, action) == pytest.approx(MASK_TRUTH[action], rel=0.15), report
