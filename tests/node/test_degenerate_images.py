"""Degenerate images through the node, under an address-space cap: ten thousand boxes on one image,
identical, nested or side by side, next to an ordinary image.

Identical and nested boxes make about 100 million overlapping pairs: that image is skipped, counted
and listed (the ordinary image is scored, and the page says why the rest is not); boxes side by side
make few pairs and are all scored. Each run ends in well under a minute in a few hundred MB.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import mixups
from helpers.builders import write_json
from helpers.capped import run_capped
from helpers.node_run import run_node
from helpers.paths import THIRD_PARTY

from handler.engine.crowded import CROWDED_PROBLEM, RUN_PROBLEM

COCO_GT = THIRD_PARTY / "coco_val2014_100" / "instances_val2014_100.json"
COCO_RESULTS = THIRD_PARTY / "coco_val2014_100" / "instances_val2014_fakebbox100_results.json"
ADDRESS_SPACE_CAP = 3 << 30  # the run before: 12 GB and a memory error under 6 GiB
BOXES = 10_000


def _boxes(kind: str) -> np.ndarray:
    """(BOXES, 4) COCO boxes (x, y, width, height) on a 2,100-pixel image."""
    if kind == "identical":
        return np.tile([100.0, 100.0, 200.0, 200.0], (BOXES, 1))
    if kind == "nested":
        step = np.arange(BOXES) * 0.01
        return np.stack((500 - step, 500 - step, 200 + 2 * step, 200 + 2 * step), axis=1)
    corner = np.stack(np.divmod(np.arange(BOXES), 100), axis=1) * 20.0
    return np.concatenate((corner, np.full((BOXES, 2), 15.0)), axis=1)


def _files(tmp_path: Path, kind: str) -> tuple[Path, Path]:
    crowded = _boxes(kind).tolist()
    plain = [[10.0, 10.0, 40.0, 40.0], [100.0, 10.0, 40.0, 40.0]]
    gt = {
        "images": [
            {"id": 1, "file_name": "crowded.jpg", "width": 2100, "height": 2100},
            {"id": 2, "file_name": "plain.jpg", "width": 200, "height": 200},
        ],
        "categories": [{"id": 1, "name": "cell"}],
        "annotations": [
            {"id": i + 1, "image_id": image, "category_id": 1, "bbox": box, "area": 1.0, "iscrowd": 0}
            for i, (image, box) in enumerate([*((1, b) for b in crowded), *((2, b) for b in plain)])
        ],
    }
    pred = [
        {"image_id": image, "category_id": 1, "bbox": box, "score": 0.9}
        for image, box in [*((1, b) for b in crowded), *((2, b) for b in plain)]
    ]
    return write_json(tmp_path / "gt.json", gt), write_json(tmp_path / "pred.json", pred)


def _run(tmp_path: Path, kind: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    gt, pred = _files(tmp_path, kind)
    store = tmp_path / "store"
    run = run_capped(store, ADDRESS_SPACE_CAP, GT_DATASET=str(gt), PRED_DATASET=str(pred))
    assert run.returncode == 0, run.stderr[-2000:]
    (report,) = (store / "reports").iterdir()
    findings: dict[str, Any] = json.loads((report / "findings.json").read_text())
    return run, findings


@pytest.mark.parametrize("kind", ["identical", "nested"])
def test_an_image_of_boxes_on_top_of_each_other_is_skipped_and_listed(tmp_path: Path, kind: str) -> None:
    run, findings = _run(tmp_path, kind)
    counts = findings["counts"]
    outcomes = ("correct", "shifted", "class_confused", "false_positive", "false_negative")
    assert [counts[name] for name in outcomes] == [2, 0, 0, 0, 0]  # the plain image, scored
    assert findings["skipped"]["count"] == 2 * BOXES
    (listed,) = [s for s in findings["skipped"]["listed"] if CROWDED_PROBLEM in s["problem"]]
    assert listed["position"] == "image 'crowded.jpg'"
    assert listed["problem"].startswith(f"{BOXES:,} ground-truth boxes and {BOXES:,} predictions")
    assert CROWDED_PROBLEM in run.stderr and "Traceback" not in run.stderr


def test_ten_thousand_boxes_side_by_side_are_all_scored(tmp_path: Path) -> None:
    _, findings = _run(tmp_path, "side by side")
    assert findings["skipped"]["count"] == 0
    assert findings["counts"]["correct"] == BOXES + 2


def test_a_mix_up_is_still_named_beside_a_crowded_image(tmp_path: Path) -> None:
    """The COCO val2014 sample with its results written as corners, and one more image of 1,001
    identical boxes on each side: the crowded image is skipped under every reading alike, so the
    reading that undoes the corners is still proposed."""
    gt = json.loads(COCO_GT.read_text())
    image = max(i["id"] for i in gt["images"]) + 1
    box = [10.0, 10.0, 50.0, 50.0]
    gt["images"].append({"id": image, "file_name": "crowded.jpg", "width": 100, "height": 100})
    first = max(a["id"] for a in gt["annotations"]) + 1
    category = gt["categories"][0]["id"]
    gt["annotations"] += [
        {
            "id": first + i,
            "image_id": image,
            "category_id": category,
            "bbox": box,
            "area": 2500.0,
            "iscrowd": 0,
        }
        for i in range(1001)
    ]
    written = write_json(tmp_path / "gt.json", gt)
    wrong = mixups.write_mistake(written, COCO_RESULTS, [mixups.corners], tmp_path / "wrong.json")
    results = json.loads(wrong.read_text())
    results += [{"image_id": image, "category_id": category, "bbox": box, "score": 0.9}] * 1001
    run = run_node(tmp_path / "store", GT_DATASET=str(written), PRED_DATASET=str(write_json(wrong, results)))
    assert run.code == 0, run.err
    assert any(
        m.startswith("warning: Did you mean the predictions with boxes written as [x1, y1, x2, y2]?")
        for m in run.messages
    ), run.messages
    assert any(CROWDED_PROBLEM in m for m in run.messages)


def test_heavy_images_past_the_runs_budget_are_skipped_and_listed(tmp_path: Path) -> None:
    """Three images of 999 GT and 1,000 predicted identical boxes, each under the image's bound:
    the first spends the run's budget (about 2,000,000 pairs with its GT's own), the other two are
    skipped and listed for it, and the plain image is scored."""
    heavy = [f"heavy{i}.jpg" for i in range(3)]
    box, plain = [100.0, 100.0, 200.0, 200.0], [[10.0, 10.0, 40.0, 40.0], [100.0, 10.0, 40.0, 40.0]]
    sides = {"gt": 999, "pred": 1000}
    boxes = {
        side: [(name, box) for name in heavy for _ in range(n)] + [("plain.jpg", b) for b in plain]
        for side, n in sides.items()
    }
    names = [*heavy, "plain.jpg"]
    gt = {
        "images": [
            {"id": i + 1, "file_name": name, "width": 400, "height": 400} for i, name in enumerate(names)
        ],
        "categories": [{"id": 1, "name": "cell"}],
        "annotations": [
            {
                "id": i + 1,
                "image_id": names.index(name) + 1,
                "category_id": 1,
                "bbox": b,
                "area": 1.0,
                "iscrowd": 0,
            }
            for i, (name, b) in enumerate(boxes["gt"])
        ],
    }
    pred = [
        {"image_id": names.index(name) + 1, "category_id": 1, "bbox": b, "score": 0.9}
        for name, b in boxes["pred"]
    ]
    store = tmp_path / "store"
    run = run_capped(
        store,
        ADDRESS_SPACE_CAP,
        GT_DATASET=str(write_json(tmp_path / "gt.json", gt)),
        PRED_DATASET=str(write_json(tmp_path / "pred.json", pred)),
    )
    assert run.returncode == 0, run.stderr[-2000:]
    (report,) = (store / "reports").iterdir()
    findings = json.loads((report / "findings.json").read_text())
    assert findings["counts"]["correct"] == 999 + 2
    listed = [s["position"] for s in findings["skipped"]["listed"] if RUN_PROBLEM in s["problem"]]
    assert listed == ["image 'heavy1.jpg'", "image 'heavy2.jpg'"]
    assert RUN_PROBLEM in run.stderr and "Traceback" not in run.stderr
