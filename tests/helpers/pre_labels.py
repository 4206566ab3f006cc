"""A report of the shipped example stored for export tests, the boxes its pre-labels should be
(found apart from the report: the example datasets read and paired again, each prediction kept when
its confidence reaches its class's threshold in `routing.json`, or the run's one threshold), and
`prelabel-eval export` run on it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from msgspec.structs import replace

from handler.cli import main
from handler.datasets import PairedBoxes, load_dataset, pair_datasets
from handler.datasets.loaded import Loaded
from handler.datasets.read_options import ReadOptions
from handler.storage import open_source
from helpers.node_run import run_node
from helpers.paths import EXAMPLES

GT, PRED = EXAMPLES / "gt.json", EXAMPLES / "predictions.jsonl"
# A box written to 3 decimals of a pixel (7 of a fraction) and read back is this close.
TOLERANCE_PX = 0.01


@dataclass(frozen=True)
class Report:
    store: Path
    report_id: str
    findings: dict[str, Any]
    routing: dict[str, float | None]
    gt_file: Path = GT
    pred_file: Path = PRED

    def gt(self) -> Loaded:
        return load_dataset(open_source(str(self.gt_file)))


def stored_report(store: Path, gt_file: Path = GT, pred_file: Path = PRED, **inputs: str) -> Report:
    """The node run on the pair (the shipped example unless given) at 0.5 unless told, its report."""
    inputs = {"CONFIDENCE_THRESHOLD": "0.5", **inputs}
    run = run_node(store, GT_DATASET=str(gt_file), PRED_DATASET=str(pred_file), **inputs)
    assert run.code == 0, run.err
    folder = store / "reports" / run.outputs["REPORT_ID"]
    findings = json.loads((folder / "findings.json").read_text())
    routing = json.loads((folder / "routing.json").read_text())
    return Report(store, findings["report_id"], findings, routing, gt_file, pred_file)


# The threshold the routed report is graded at: its recommendation saves clearly more (at 0.5 the
# gain is within the noise of the images, and the recommendation keeps 0.5).
ROUTED_GIVEN = "0.8"


def routed_report(store: Path) -> Report:
    """The recommendation pre-labels `person` from 0.35, the other classes at 0.45 (the run: 0.8)."""
    found = stored_report(store, CONFIDENCE_THRESHOLD=ROUTED_GIVEN)
    assert found.routing["person"] == 0.35 and set(found.routing.values()) == {0.35, 0.45}
    return found


def export(report: Report, target: str, out: Path, *options: str) -> Path:
    code = main(
        [
            "export",
            report.report_id,
            "--store",
            str(report.store),
            "--to",
            target,
            "--out",
            str(out),
            *options,
        ]
    )
    assert code == 0
    return out


def gt() -> Loaded:
    return load_dataset(open_source(str(GT)))


def paired_with_gt(
    pred: Path, reference: Loaded, fmt: str | None = None, version: str | None = None
) -> PairedBoxes:
    options = ReadOptions("pred", model_version=version) if version else ReadOptions()
    exported = load_dataset(open_source(str(pred)), fmt, reference, options)
    return pair_datasets(reference.dataset, exported.dataset)


Boxes = list[tuple[str, str, float]]  # asset id, class, confidence, in a sorted order


def in_order(paired: PairedBoxes) -> tuple[Boxes, list[int]]:
    """Every prediction as (asset, class, confidence), and the rows sorted by them and their boxes."""
    pred = paired.pred
    keys = [
        (paired.asset_ids[i], paired.class_names[c], round(float(s), 6))
        for i, c, s in zip(pred.image.tolist(), pred.class_id.tolist(), pred.confidence.tolist(), strict=True)
    ]
    order = sorted(range(len(keys)), key=lambda row: (keys[row], *pred.xyxy[row].round(1).tolist()))
    return [keys[row] for row in order], order


def boxes(paired: PairedBoxes) -> tuple[Boxes, np.ndarray]:
    """Every prediction as (asset, class, confidence) and its xyxy, sorted by all of them."""
    keys, order = in_order(paired)
    return keys, paired.pred.xyxy[order]


def expected(report: Report, policy: str) -> tuple[Boxes, np.ndarray]:
    """The predictions the policy keeps, found from the datasets themselves."""
    return boxes(kept_predictions(report, policy))


def kept_predictions(report: Report, policy: str) -> PairedBoxes:
    """The datasets paired again, the predictions those the policy keeps."""
    reference = report.gt()
    pred = load_dataset(open_source(str(report.pred_file)), None, reference)
    paired = pair_datasets(reference.dataset, pred.dataset)
    single = {
        "single": report.findings["recommendation"]["threshold"],
        "threshold": float(policy.split()[-1]) if policy.startswith("threshold ") else None,
    }.get(policy.split()[0])
    thresholds = [report.routing.get(name) if single is None else single for name in paired.class_names]
    limit = np.array([np.nan if t is None else t for t in thresholds], dtype=float)[paired.pred.class_id]
    return replace(paired, pred=paired.pred[paired.pred.confidence >= limit])


def same_boxes(found: tuple[Boxes, np.ndarray], wanted: tuple[Boxes, np.ndarray]) -> None:
    assert found[0] == wanted[0]
    np.testing.assert_allclose(found[1], wanted[1], atol=TOLERANCE_PX, rtol=0)


def read_label_studio(path: Path, reference: Loaded) -> PairedBoxes:
    (version,) = {task["predictions"][0]["model_version"] for task in json.loads(path.read_text())}
    return paired_with_gt(path, reference, version=version)
