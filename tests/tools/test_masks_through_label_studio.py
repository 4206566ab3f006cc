"""The COCO val2014 pair on masks through the real Label Studio server: its GT polygons and
brushes and its mask predictions (brushes) imported into a project with a polygon and a brush
control and exported through the export API read back as the COCO files score: the same counts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers.label_studio_prepared import COCO_MASKS_RESULTS, COCO_PAIR, COCO_PAIR_EXPORT, COCO_PAIR_GT
from helpers.needs import existing
from helpers.node_run import run_node


def findings(store: Path, gt: Path, pred: Path) -> dict[str, Any]:
    run = run_node(store, GT_DATASET=str(gt), PRED_DATASET=str(pred))
    assert run.code == 0, run.err[-3000:]
    document: dict[str, Any] = json.loads(
        (store / "reports" / run.outputs["REPORT_ID"] / "findings.json").read_text()
    )
    return document


def test_a_label_studio_export_of_the_masks_scores_as_the_coco_files(
    label_studio_prepared: Callable[[str], Path], tmp_path: Path
) -> None:
    existing(COCO_PAIR, "the third-party data")
    exported = label_studio_prepared("coco-masks") / COCO_PAIR_EXPORT
    tasks = json.loads(exported.read_text())
    kinds = {r["type"] for t in tasks for a in t["annotations"] + t["predictions"] for r in a["result"]}
    assert kinds == {"polygonlabels", "brushlabels"}
    coco = findings(tmp_path / "coco", COCO_PAIR_GT, COCO_MASKS_RESULTS)
    found = findings(tmp_path / "ls", exported, exported)
    assert found["time"]["shape"] == coco["time"]["shape"] == "masks"
    assert found["counts"] == coco["counts"] and found["assistance_score"] == coco["assistance_score"]
