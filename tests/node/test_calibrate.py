"""`prelabel-eval calibrate` and the costs file it writes, used by `run --time-costs`, by the node's
TIME_COSTS input and by `inputs.read_time_costs`; bad logs and costs files are one line each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from helpers.builders import node_env
from helpers.coco_masks import coco_pair
from helpers.labeler_logs import (
    CVAT_DOCS_COLUMNS,
    MASK_TRUTH,
    TRUTH,
    SimulatedTask,
    cvat_events_csv,
    label_studio_export,
    simulated_cvat_events,
    simulated_tasks,
)
from helpers.node_run import cli_as_text
from helpers.paths import EXAMPLES

from handler.datasets.logs import TaskTimes, read_log
from handler.engine.timecost import ACTIONS, TimeCosts
from handler.inputs.node_inputs import read_time_costs
from handler.report.findings import duration

GT, PRED = EXAMPLES / "gt.json", EXAMPLES / "predictions.jsonl"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """`prelabel-eval ARGS` in this process (the node's own process is run below where it matters)."""
    return cli_as_text(*args)


def one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> str:
    assert result.returncode != 0 and "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def costs_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("calibrate")
    export = folder / "team_export.json"
    export.write_bytes(orjson.dumps(label_studio_export(simulated_tasks(240))))
    result = run("calibrate", str(export), "--out", str(folder / "costs.json"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("fitted from 240 tasks of team_export.json, ")
    assert "fit: R² 0.9" in result.stdout and "wrote " in result.stdout
    return folder / "costs.json"


def test_calibrate_writes_the_fitted_seconds_and_whose_they_are(costs_file: Path) -> None:
    document = json.loads(costs_file.read_text())
    assert set(document["seconds"]) == set(ACTIONS)
    for action, truth in TRUTH.items():
        assert document["seconds"][action] == pytest.approx(truth, rel=0.15), action
        low, high = document["fitted_from"]["intervals"][action]
        assert low <= document["seconds"][action] <= high
    fitted = document["fitted_from"]
    assert fitted["files"] == ["team_export.json"] and fitted["tasks"] == 240 and fitted["unit"] == "tasks"
    assert fitted["kept_default"] == [] and len(fitted["replicates"]) == 1000
    costs = read_time_costs(str(costs_file), "TIME_COSTS")
    assert costs.to_dict() == document["seconds"] and costs.fit is not None
    assert costs.fit.source.startswith("fitted from 240 tasks of team_export.json, 20")


def test_run_and_the_node_price_the_work_with_the_costs_file(costs_file: Path, tmp_path: Path) -> None:
    seconds = json.loads(costs_file.read_text())["seconds"]
    store = str(tmp_path / "s")
    result = run(str(GT), str(PRED), "--time-costs", str(costs_file), "--json", "--store", store)
    assert result.returncode == 0, result.stderr
    run_findings = json.loads(result.stdout)
    assert run_findings["time"]["costs_seconds"] == seconds
    compared = run("compare", str(GT), str(PRED), str(PRED), "--time-costs", str(costs_file))
    assert compared.returncode == 0, compared.stderr
    saved = duration(run_findings["time"]["saved_seconds"])
    assert f"A: score 0.56 · Partial assist · {saved} saved" in compared.stdout
    inputs = {**node_env(GT, PRED), "TIME_COSTS": str(costs_file)}
    inputs_file = tmp_path / "inputs.json"
    inputs_file.write_text(json.dumps({k: v for k, v in inputs.items() if k != "PRELABEL_STORE"}))
    node = subprocess.run(
        [sys.executable, "-m", "handler", "--inputs", str(inputs_file), "--store", str(tmp_path / "n")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert node.returncode == 0, node.stderr
    report_id = json.loads(node.stdout.strip().splitlines()[-1])["REPORT_ID"]
    findings = json.loads((tmp_path / "n" / "reports" / report_id / "findings.json").read_text())
    assert findings["time"]["costs_seconds"] == seconds


def test_a_hand_written_costs_file_needs_only_the_seconds_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "costs.json"
    path.write_text('{"seconds": {"draw": 30}}')
    costs = read_time_costs(str(path), "TIME_COSTS")
    assert costs == TimeCosts(draw=30.0) and costs.fit is None


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("not json", "line 1 column 1: expected a JSON costs file"),
        ('{"seconds": {"draw": -1}}', "seconds.draw: expected seconds, a number from 0 to 86400, but got -1"),
        (
            '{"seconds": {"draw": 1e308}}',
            "seconds.draw: expected seconds, a number from 0 to 86400, but got 1e+308",
        ),
        (
            '{"seconds": {"draw": null}}',
            "seconds.draw: expected seconds, a number from 0 to 86400, but got None",
        ),
        ('{"seconds": {"drawing": 3}}', "seconds: unknown action 'drawing': expected accept, nudge"),
        ('{"seconds": [1, 2]}', "seconds: expected a JSON object, got list"),
        ('{"seconds": {}, "fitted_from": {"files": []}}', "fitted_from: expected what `prelabel-eval"),
    ],
)
def test_a_bad_costs_file_is_one_line(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "costs.json"
    path.write_text(content)
    result = run(str(GT), str(PRED), "--time-costs", str(path), "--store", str(tmp_path / "s"))
    one_line_error(result, "--time-costs", str(path), expected)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("support", "draw"), -3),
        (("intervals", "draw"), [1e308, 1e308]),
        (("intervals", "nudge"), [5, 1]),
        (("replicates",), [[1e308] * 5]),
        (("rmse_seconds",), None),
        (("support", "draw"), 2**65),
        (("skipped",), {"rows": 2**64}),
    ],
    ids=[
        "negative support",
        "huge interval",
        "low above high",
        "huge replicate",
        "null rmse",
        "support past 2^64",
        "skipped past 2^64",
    ],
)
def test_a_fit_edited_out_of_range_is_one_line(
    costs_file: Path, tmp_path: Path, path: tuple[str, ...], value: object
) -> None:
    document = json.loads(costs_file.read_text())
    place = document["fitted_from"]
    for key in path[:-1]:
        place = place[key]
    place[path[-1]] = value
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(document))
    result = run(str(GT), str(PRED), "--time-costs", str(edited), "--store", str(tmp_path / "s"))
    one_line_error(
        result, "--time-costs", str(edited), "fitted_from: expected what `prelabel-eval calibrate` writes"
    )


def test_costs_file_and_seconds_options_together_are_refused(costs_file: Path, tmp_path: Path) -> None:
    result = run(str(GT), str(PRED), "--time-costs", str(costs_file), "--seconds-draw", "3")
    one_line_error(result, "--time-costs: give the seconds in the costs file or as --seconds-draw, not both")


def test_a_missing_costs_file_on_the_node_names_the_input(tmp_path: Path) -> None:
    env = {**node_env(GT, PRED), "TIME_COSTS": str(tmp_path / "nowhere.json")}
    node = subprocess.run(
        [sys.executable, "-m", "handler", "--store", str(tmp_path / "n")],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    assert node.returncode != 0 and "Traceback" not in node.stderr
    assert "TIME_COSTS: " in node.stderr and "nowhere.json: cannot read the costs file" in node.stderr


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"\x89PNG\r\n", "expected a Label Studio JSON export (a list of tasks) or a CVAT events CSV"),
        (b"[1, 2", "line 1 column 6: expected a Label Studio JSON export"),
        (b"scope,when\n", "line 1: expected CVAT's events columns"),
        (cvat_events_csv(CVAT_DOCS_COLUMNS, []), "no jobs to fit the seconds on (skipped: it is empty)"),
        (
            cvat_events_csv(
                CVAT_DOCS_COLUMNS[::-1], [{**e, "timestamp": "noon"} for e in simulated_cvat_events(3)]
            ),
            "no jobs to fit the seconds on (skipped: ",
        ),
        (
            cvat_events_csv(CVAT_DOCS_COLUMNS, [{**e, "job_id": ""} for e in simulated_cvat_events(3)]),
            "no jobs to fit the seconds on (skipped: ",
        ),
    ],
    ids=["png", "cut json", "two columns", "header only", "reordered, no timestamp", "no job_id"],
)
def test_calibrating_what_is_no_log_is_one_line(tmp_path: Path, content: bytes, expected: str) -> None:
    log = tmp_path / "log.bin"
    log.write_bytes(content)
    one_line_error(run("calibrate", str(log), "--out", str(tmp_path / "c.json")), str(log), expected)
    assert not (tmp_path / "c.json").exists()


def test_a_cvat_event_with_a_long_payload_is_read(tmp_path: Path) -> None:
    """A payload over csv's default field limit (131,072 characters) is an event like another."""
    events = simulated_cvat_events(60)
    events[5]["payload"] = "x" * 200_000
    log = tmp_path / "events.csv"
    log.write_bytes(cvat_events_csv(CVAT_DOCS_COLUMNS, events))
    result = run("calibrate", str(log), "--out", str(tmp_path / "c.json"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("fitted from 60 jobs of events.csv, ")


def test_skipped_annotations_are_counted_on_the_first_line(tmp_path: Path) -> None:
    tasks = label_studio_export(simulated_tasks(40))
    tasks[0]["annotations"][0]["lead_time"] = -5
    tasks[1]["annotations"][0]["was_cancelled"] = True
    tasks[2]["annotations"][0]["parent_prediction"] = None  # its task's only prediction: taken, said
    tasks[3]["annotations"][0]["parent_prediction"] = None
    tasks[3]["predictions"] = []  # nothing to have started from: skipped
    export = tmp_path / "export.json"
    export.write_bytes(orjson.dumps(tasks))
    result = run("calibrate", str(export), "--out", str(tmp_path / "c.json"))
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("fitted from 37 tasks of export.json")
    assert "skipped: 1 cancelled (skipped by the labeler), 1 negative lead_time, 1 unlinked" in first
    assert first.endswith("taken: 1 started from the task's only prediction (no parent_prediction)")
    # 37 tasks: relabel shows in fewer than 30 of them, and keeps its default, saying so.
    (relabel,) = [line for line in result.stdout.splitlines() if line.startswith("relabel")]
    assert "default kept" in relabel and "(fewer than 30 tasks show it)" in relabel
    assert json.loads((tmp_path / "c.json").read_text())["seconds"]["relabel"] == TimeCosts().relabel


def test_the_page_says_whose_seconds_with_each_interval_and_carries_them_into_the_savings(
    costs_file: Path, tmp_path: Path
) -> None:
    document = json.loads(costs_file.read_text())
    document["fitted_from"]["files"] = ["<b>team</b>.json"]  # a file name is user text: escaped
    costs = tmp_path / "costs.json"
    costs.write_text(json.dumps(document))
    store = tmp_path / "s"
    result = run(str(GT), str(PRED), "--time-costs", str(costs), "--json", "--store", str(store))
    assert result.returncode == 0, result.stderr
    findings = json.loads(result.stdout)
    source = findings["time"]["costs_source"]
    assert source["summary"].startswith("fitted from 240 tasks of <b>team</b>.json, 20")
    assert source["actions"]["draw"]["fitted"] and source["actions"]["draw"]["tasks"] >= 50
    page = (store / "reports" / findings["report_id"] / "report.html").read_text()
    assert "<b>team</b>" not in page and "fitted from 240 tasks of &lt;b&gt;team&lt;/b&gt;.json, 20" in page
    for action in ACTIONS:
        low, high = document["fitted_from"]["intervals"][action]
        shown = (
            f"fitted: {low:.3g} \u2013 {high:.3g} s (95%), {document['fitted_from']['support'][action]} tasks"
        )
        assert shown in page, action
    # The saved interval draws the images and the fitted seconds together; the images-only one is shown too.
    spread, saved = findings["uncertainty"], findings["time"]["saved_seconds"]
    joint, images_only = spread["saved_seconds"], spread["saved_seconds_images_only"]
    assert joint != images_only
    assert joint["low"] <= saved <= joint["high"] and images_only["low"] <= saved <= images_only["high"]
    assert 'data-field="saved_interval_images_only"' in page


def test_cvat_events_calibrate_draw_nudge_delete_and_keep_the_rest(tmp_path: Path) -> None:
    events = tmp_path / "events.csv"
    events.write_bytes(cvat_events_csv(CVAT_DOCS_COLUMNS, simulated_cvat_events(60)))
    result = run("calibrate", str(events), "--out", str(tmp_path / "c.json"))
    assert result.returncode == 0, result.stderr
    assert (
        result.stdout.startswith("fitted from 60 jobs of events.csv, ") and "(cvat-events)" in result.stdout
    )
    seconds = json.loads((tmp_path / "c.json").read_text())["seconds"]
    for action in ("draw", "nudge", "delete"):
        assert seconds[action] == pytest.approx(TRUTH[action], rel=0.1), action
    # CVAT logs no event for accepting or relabeling a box: both keep their defaults, saying so.
    lines = {line.split()[0]: line for line in result.stdout.splitlines()[1:]}
    for action in ("accept", "relabel"):
        assert seconds[action] == getattr(TimeCosts(), action)
        assert "default kept" in lines[action] and "(fewer than 30 jobs show it)" in lines[action]


def test_cvat_events_of_mask_work_fit_a_mask_s_seconds_when_told(tmp_path: Path) -> None:
    """CVAT's events do not say what was drawn: `--shape masks` says it, and the costs are a
    mask's (the fitted seconds, the actions CVAT does not log at a mask's defaults)."""
    events = tmp_path / "events.csv"
    events.write_bytes(cvat_events_csv(CVAT_DOCS_COLUMNS, simulated_cvat_events(60, truth=MASK_TRUTH)))
    result = run("calibrate", str(events), "--shape", "masks", "--out", str(tmp_path / "c.json"))
    assert result.returncode == 0, result.stderr
    assert "(cvat-events, masks)" in result.stdout.splitlines()[0]
    document = json.loads((tmp_path / "c.json").read_text())
    assert document["shape"] == "masks"
    for action in ("draw", "nudge", "delete"):
        assert document["seconds"][action] == pytest.approx(MASK_TRUTH[action], rel=0.1), action
    for action in ("accept", "relabel"):
        assert document["seconds"][action] == getattr(TimeCosts().on_masks(), action)


def test_a_log_with_nothing_to_fit_is_one_line(tmp_path: Path) -> None:
    export = tmp_path / "export.json"
    export.write_bytes(orjson.dumps([{"id": 1, "annotations": [{"result": [], "lead_time": -1}]}]))
    result = run("calibrate", str(export), "--out", str(tmp_path / "c.json"))
    one_line_error(result, "export.json: no tasks to fit the seconds on (skipped: 1 negative lead_time)")


def test_a_mask_project_s_export_fits_a_mask_s_seconds(tmp_path: Path) -> None:
    """Polygons fixed, relabelled, deleted and drawn: their seconds come back, the costs say masks
    (the file too), and a run on masks prices its work with them as they are."""
    export = tmp_path / "masks_export.json"
    export.write_bytes(orjson.dumps(label_studio_export(simulated_tasks(240, masks=True))))
    result = run("calibrate", str(export), "--out", str(tmp_path / "costs.json"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("fitted from 240 tasks of masks_export.json, ")
    assert "(label-studio-export, masks)" in result.stdout.splitlines()[0]
    document = json.loads((tmp_path / "costs.json").read_text())
    assert document["shape"] == "masks"
    for action, truth in MASK_TRUTH.items():
        assert document["seconds"][action] == pytest.approx(truth, rel=0.15), action
    costs = read_time_costs(str(tmp_path / "costs.json"), "TIME_COSTS")
    assert costs.shape == "masks" and costs.on_masks() == costs
    assert costs.fit is not None and costs.fit.shape == "masks"
    gt, masks, _ = coco_pair()
    for pair, warned in (((gt, masks), False), ((GT, PRED), True)):
        store = str(tmp_path / f"store-{warned}")
        priced = run(
            *map(str, pair), "--time-costs", str(tmp_path / "costs.json"), "--json", "--store", store
        )
        assert priced.returncode == 0, priced.stderr
        codes = [w["code"] for w in json.loads(priced.stdout)["warnings"]]
        assert ("costs_of_another_shape" in codes) == warned, codes


def test_an_outline_the_editor_marks_as_changed_is_a_fix_even_when_its_points_came_back(
    tmp_path: Path,
) -> None:
    """Label Studio's editor writes `origin: prediction-changed` on a region the labeler edited: a
    vertex dragged and dragged back is still work on the outline."""
    task = simulated_tasks(1, masks=True)[0]
    accepted = [region for region in task.annotation if region.get("origin") == "prediction"]
    assert accepted
    edited = SimulatedTask(
        task.prediction,
        [
            {**region, "origin": "prediction-changed"} if region in accepted else region
            for region in task.annotation
        ],
        task.lead_time,
        task.actions,
    )
    counts: dict[str, TaskTimes] = {}
    for name, tasks in (("as_submitted", [task]), ("edited", [edited])):
        path = tmp_path / f"{name}.json"
        path.write_bytes(orjson.dumps(label_studio_export(tasks)))
        times = read_log(str(path)).times
        assert isinstance(times, TaskTimes)
        counts[name] = times
    assert counts["as_submitted"].counts["accept"][0] == len(accepted)
    assert counts["edited"].counts["accept"][0] == 0
    assert counts["edited"].counts["nudge"][0] == counts["as_submitted"].counts["nudge"][0] + len(accepted)
