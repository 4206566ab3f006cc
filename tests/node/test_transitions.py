"""Box transitions between two prediction sets (`compare`'s matrix, `--transitions` rows, the page),
checked against an independent route: the two node runs' own ledgers joined by GT box."""

from __future__ import annotations

import csv
import io
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.builders import write_json
from helpers.needs import module
from helpers.node_run import CliRun, run_cli
from helpers.paths import THIRD_PARTY

from handler.engine.analyses.gt_outcomes import GtBoxes
from handler.engine.outcomes import Outcome
from handler.engine.timecost import TimeCosts
from handler.engine.transitions import GT_OUTCOMES, box_transitions
from handler.inputs import parse_inputs
from handler.metric import load_outcomes
from handler.pipeline import run
from handler.storage.local import LocalStore

COCO = THIRD_PARTY / "coco_val2014_100"
GT, PRED_A = COCO / "instances_val2014_100.json", COCO / "instances_val2014_fakebbox100_results.json"
VOC = THIRD_PARTY / "voc_padilla_100"
KEYS = [outcome.key for outcome in GT_OUTCOMES]

pq = module("pyarrow.parquet", "the Parquet format of the ledger: the test extra installs pyarrow")


def _coco_model_b(work: Path) -> Path:
    """Another model on the same images: A's boxes moved a little, a tenth dropped, some relabeled."""
    rng = random.Random(3)
    results = json.loads(PRED_A.read_text(encoding="utf-8"))
    categories = sorted({r["category_id"] for r in results})
    moved = []
    for result in results:
        x, y, w, h = result["bbox"]
        if rng.random() < 0.1:
            continue
        category = rng.choice(categories) if rng.random() < 0.05 else result["category_id"]
        box = [x + rng.uniform(-0.15, 0.15) * w, y + rng.uniform(-0.15, 0.15) * h, w, h]
        moved.append({**result, "bbox": box, "category_id": category})
    return write_json(work / "model_b.json", moved)


def _voc_model_b(work: Path) -> Path:
    """A less sure model: the VOC detections' scores lowered, each box nudged a pixel or two."""
    rng = random.Random(5)
    folder = work / "voc_b"
    folder.mkdir()
    for path in sorted((VOC / "dets" / "abs_xyx2y2").glob("*.txt")):
        lines = []
        for line in path.read_text(encoding="utf-8").splitlines():
            label, score, *box = line.split()
            nudged = [float(v) + rng.uniform(-2, 2) for v in box]
            lines.append(" ".join([label, f"{float(score) * 0.8:.6f}", *(f"{v:.1f}" for v in nudged)]))
        (folder / path.name).write_text("\n".join(lines) + ("\n" if lines else ""), encoding="utf-8")
    return folder


# Two real pairs through two readers: (GT, A, how B is made, the inputs both are read with).
CASES = {
    "coco": (GT, PRED_A, _coco_model_b, {}),
    "voc": (
        VOC / "gts" / "pascalvoc_format",
        VOC / "dets" / "abs_xyx2y2",
        _voc_model_b,
        {"PRED_NAMES": str(VOC / "voc.names")},
    ),
}
OPTIONS = {"PRED_NAMES": "--pred-names"}


def _ledger_outcomes(
    work: Path, gt: Path, pred: Path, inputs: dict[str, str]
) -> tuple[dict[tuple[str, int], dict[str, Any]], str]:
    """A node run's GT rows by (asset id, position in the GT file), and its report id."""
    store = LocalStore(work)
    result = run(parse_inputs({"GT_DATASET": str(gt), "PRED_DATASET": str(pred), **inputs}), store)
    rows = load_outcomes(result.outputs.report_id, store=store)
    gt_rows = np.flatnonzero(rows["gt_index"] >= 0).tolist()
    by_box = {
        (rows["asset_id"][i], int(rows["gt_index"][i])): {key: rows[key][i] for key in ("outcome", "iou")}
        for i in gt_rows
    }
    return by_box, result.outputs.report_id


def _queue_seconds(work: Path, report_id: str) -> dict[str, float]:
    text = (work / "reports" / report_id / "review_queue.csv").read_text(encoding="utf-8")
    return {row["asset_id"]: float(row["expected_seconds"]) for row in csv.DictReader(io.StringIO(text))}


def _compare(*args: str) -> CliRun:
    return run_cli("compare", *args)


@pytest.fixture(scope="module", params=list(CASES))
def compared(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp(request.param)
    gt, pred_a, model_b, inputs = CASES[request.param]
    pred_b = model_b(work)
    options = [word for key, value in inputs.items() for word in (OPTIONS[key], value)]
    # every format on one pair, the CSV on the other (a compare per file)
    suffixes = ("csv", "jsonl", "parquet") if request.param == "coco" else ("csv",)
    files = {suffix: work / f"moves.{suffix}" for suffix in suffixes}
    pair = (str(gt), str(pred_a), str(pred_b), *options, "--json", "--store", str(work))
    runs = {suffix: _compare(*pair, "--transitions", str(path)) for suffix, path in files.items()}
    assert all(done.returncode == 0 for done in runs.values()), [done.stderr for done in runs.values()]
    a, report_a = _ledger_outcomes(work / "a", gt, pred_a, inputs)
    b, report_b = _ledger_outcomes(work / "b", gt, pred_b, inputs)
    return {
        "document": json.loads(runs["csv"].stdout),
        "files": files,
        "a": a,
        "b": b,
        "seconds_a": _queue_seconds(work / "a", report_a),
        "seconds_b": _queue_seconds(work / "b", report_b),
    }


def test_the_matrix_is_the_two_ledgers_joined_box_by_box(compared: dict[str, Any]) -> None:
    a, b = compared["a"], compared["b"]
    assert set(a) == set(b), "every GT box is in both runs' ledgers"
    reference = Counter((a[box]["outcome"], b[box]["outcome"]) for box in a)
    moved = compared["document"]["transitions"]
    assert moved["outcomes"] == KEYS
    assert moved["counts"] == [[reference[(row, column)] for column in KEYS] for row in KEYS]
    assert moved["boxes"] == len(a)
    seconds = dict(zip(KEYS, moved["seconds"], strict=True))
    costs = TimeCosts()
    assert seconds == {outcome.key: costs.seconds(outcome) for outcome in GT_OUTCOMES}
    worse = sum(count for (x, y), count in reference.items() if seconds[y] > seconds[x])
    better = sum(count for (x, y), count in reference.items() if seconds[y] < seconds[x])
    assert (moved["worse"], moved["better"]) == (worse, better) and worse > 10 and better > 0
    most = max(count for (x, y), count in reference.items() if x != y)  # the largest move comes first
    assert moved["changes"][0].startswith(f"B turned {most} ")


def test_the_images_b_lost_most_are_the_review_queues_difference(compared: dict[str, Any]) -> None:
    listed = compared["document"]["transitions"]["images_b_lost_most"]
    seconds_a, seconds_b = compared["seconds_a"], compared["seconds_b"]
    added = {asset: seconds_b[asset] - seconds_a[asset] for asset in seconds_a}  # each to the millisecond
    most = sorted((seconds for seconds in added.values() if seconds > 2e-3), reverse=True)[:10]
    assert len(listed) == len(most) > 0
    assert [row["seconds_added"] for row in listed] == pytest.approx(most, abs=2e-3)
    assert all(row["seconds_added"] == pytest.approx(added[row["asset_id"]], abs=2e-3) for row in listed)
    a, b = compared["a"], compared["b"]
    costs = TimeCosts()
    for row in listed:
        on_image = [box for box in a if box[0] == row["asset_id"]]
        delta = [
            costs.seconds(Outcome[b[box]["outcome"].upper()])
            - costs.seconds(Outcome[a[box]["outcome"].upper()])
            for box in on_image
        ]
        assert (row["worse"], row["better"]) == (sum(d > 0 for d in delta), sum(d < 0 for d in delta))


def test_every_format_of_the_rows_is_the_join(compared: dict[str, Any]) -> None:
    a, b = compared["a"], compared["b"]
    files = compared["files"]
    rows = list(csv.DictReader(io.StringIO(files["csv"].read_text(encoding="utf-8"))))
    assert len(rows) == len(a)
    for row in rows:
        box = (row["asset_id"], int(row["gt_index"]))
        assert (row["outcome_a"], row["outcome_b"]) == (a[box]["outcome"], b[box]["outcome"])
        for side, found in (("a", a), ("b", b)):
            iou = found[box]["iou"]
            assert (row[f"iou_{side}"] == "") == bool(np.isnan(iou))
            assert row[f"iou_{side}"] == "" or float(row[f"iou_{side}"]) == pytest.approx(iou, abs=1e-12)
    if "jsonl" not in files:
        return
    lines = [json.loads(line) for line in files["jsonl"].read_text(encoding="utf-8").splitlines()]
    table = pq.read_table(files["parquet"]).to_pylist()
    assert (
        [(r["asset_id"], r["gt_index"], r["outcome_a"], r["outcome_b"]) for r in lines]
        == [(r["asset_id"], r["gt_index"], r["outcome_a"], r["outcome_b"]) for r in table]
        == [(r["asset_id"], int(r["gt_index"]), r["outcome_a"], r["outcome_b"]) for r in rows]
    )


def _boxes(assets: list[str], image: list[int], source: list[int], outcome: list[Outcome]) -> GtBoxes:
    n = len(image)
    return GtBoxes(
        tuple(assets),
        ("car",),
        np.array(image),
        np.array(source),
        np.zeros(n, dtype=np.int64),
        np.array([int(o) for o in outcome]),
        np.full(n, np.nan),
        np.full(n, -1),
        np.full(n, -1),
        np.full(n, np.nan),
    )


def test_boxes_pair_by_asset_and_position_whatever_the_order() -> None:
    """B's run lists its images in another order and scored one image A did not (and not one A did)."""
    ok, shifted, missed = Outcome.CORRECT, Outcome.SHIFTED, Outcome.FALSE_NEGATIVE
    a = _boxes(["x", "y", "only_a"], [0, 0, 1, 2], [0, 1, 0, 0], [ok, ok, missed, ok])
    b = _boxes(["only_b", "y", "x"], [0, 1, 2, 2], [0, 0, 1, 0], [missed, ok, shifted, ok])
    moved = box_transitions(a, b, TimeCosts())
    assert moved.rows_a.tolist() == [0, 1, 2] and moved.rows_b.tolist() == [3, 2, 1]
    expected = np.zeros((4, 4), dtype=np.int64)
    expected[0, 0], expected[0, 1], expected[3, 0] = 1, 1, 1  # x#0 same; x#1 correct->shifted; y#0 missed->ok
    assert moved.matrix.tolist() == expected.tolist()
    assert moved.by_image(moved.added_seconds > 0).tolist() == [1, 0, 0]


def test_a_transitions_file_of_no_known_format_is_refused_before_the_runs(tmp_path: Path) -> None:
    done = _compare(str(GT), str(PRED_A), str(PRED_A), "--transitions", str(tmp_path / "moves.xlsx"))
    assert done.returncode == 2 and done.stdout == b"" and not (tmp_path / "moves.xlsx").exists()
    assert done.stderr.strip().endswith("the file's suffix names its format: expected .jsonl, .csv, .parquet")
