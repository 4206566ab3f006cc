"""Reports rendered from real runs of the node's one code path, for the browser tests.

Each report is produced exactly as the node produces it: `handler.pipeline.run` on parsed inputs, stored in
a `LocalStore`; the tests then open the stored `report.html` and compare it with the stored `findings.json`.

They are made once per run, by a background job (helpers/background.py) started as soon as the run
has collected a test that uses `browser_reports`, and shared by the xdist workers.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest

from handler.inputs import parse_inputs
from handler.pipeline import run
from handler.storage.local import LocalStore
from helpers.background import collected, finish_job, start_helper_job, wait_for
from helpers.builders import annotation, asset, write_json
from helpers.paths import EXAMPLES, THIRD_PARTY
from helpers.pictures import coco_pictures

HOSTILE_CLASS: Final = "<img src=x onerror=alert(1)>"
QUOTED_ASSET: Final = """street "quoted" 'id' <b>&amp; 0001.jpg"""


@dataclass(frozen=True)
class StoredReport:
    name: str
    html: Path
    findings: dict[str, Any]


def _run(name: str, work: Path, gt: Path | str, pred: Path | str, **inputs: str) -> StoredReport:
    store_root = work / "store"
    raw = {"GT_DATASET": str(gt), "PRED_DATASET": str(pred), **inputs}
    result = run(parse_inputs(raw), LocalStore(store_root))
    folder = store_root / "reports" / result.outputs.report_id
    findings = json.loads((folder / "findings.json").read_text(encoding="utf-8"))
    assert findings == result.findings.document(), "stored findings differ from the run's"
    return StoredReport(name, folder / "report.html", findings)


def strong(work: Path) -> StoredReport:
    """The shipped example's GT against itself, slightly jittered, a few boxes dropped, one invented;
    its assets tagged `night` or `day` (tag slices)."""
    gt_path = EXAMPLES / "gt.json"
    rng = random.Random(20261129)
    assets = []
    for index, item in enumerate(json.loads(gt_path.read_text(encoding="utf-8"))["assets"]):
        boxes = []
        for box in item["annotations"]:
            if rng.random() < 0.04:
                continue  # missed
            w, h = box["x_max"] - box["x_min"], box["y_max"] - box["y_min"]
            jitter = [rng.uniform(-0.03, 0.03) * s for s in (w, h, w, h)]
            x0, y0 = box["x_min"] + jitter[0], box["y_min"] + jitter[1]
            x1, y1 = box["x_max"] + jitter[2], box["y_max"] + jitter[3]
            boxes.append(annotation((box["label"], x0, y0, x1, y1), round(rng.uniform(0.6, 0.99), 3)))
        assets.append({**item, "annotations": boxes, "tags": ["night" if index % 3 == 0 else "day"]})
    assets[0]["annotations"].append(annotation(("car", 1, 1, 30, 30), 0.9))  # invented
    pred = write_json(work / "strong_pred.json", {"assets": assets})
    return _run("strong", work, gt_path, pred)


def weak(work: Path) -> StoredReport:
    """Cartucho/mAP's 85 indoor images as COCO (yfpeng's conversion): a weak darknet-like detector."""
    folder = THIRD_PARTY / "cartucho_mAP_85" / "podm_tests_sample"
    return _run("weak", work, folder / "groundtruths_coco.json", folder / "detections_coco.json")


def empty(work: Path) -> StoredReport:
    """Two datasets that share no image asset: nothing can be scored."""
    gt = write_json(work / "gt.json", [asset("a.jpg", [annotation(("car", 0, 0, 10, 10))])])
    pred = write_json(work / "pred.json", [asset("b.jpg", [annotation(("car", 0, 0, 10, 10), 0.9)])])
    return _run("empty", work, gt, pred)


def many_classes(work: Path) -> StoredReport:
    """COCO val2014, 100 images, 80 classes, with cocoapi's 'fake' (detector-like) results, and
    its images (made here, named by the GT's `file_name`) behind the sketches: `--images`."""
    folder = THIRD_PARTY / "coco_val2014_100"
    coco_pictures(folder / "instances_val2014_100.json", work / "val2014")
    return _run(
        "many-classes",
        work,
        folder / "instances_val2014_100.json",
        folder / "instances_val2014_fakebbox100_results.json",
        IMAGES=str(work / "val2014"),
    )


def hostile(work: Path) -> StoredReport:
    """A native dataset whose class name is markup and whose asset id carries quotes, `<`, and `&amp;`."""
    gt = [
        {
            **asset(
                QUOTED_ASSET,
                [
                    annotation((HOSTILE_CLASS, 10, 10, 50, 50)),
                    annotation(("car", 60, 10, 95, 40)),
                    annotation(("car", 5, 60, 40, 95)),
                    annotation((HOSTILE_CLASS, 50, 55, 90, 95)),
                ],
            ),
            "tags": [HOSTILE_CLASS],
        },
        asset(
            "plain.jpg",
            [
                annotation(("car", 10, 10, 40, 40)),
                annotation((HOSTILE_CLASS, 50, 50, 90, 90)),
            ],
        ),
    ]
    pred = [
        asset(
            QUOTED_ASSET,
            [
                annotation((HOSTILE_CLASS, 11, 10, 50, 51), 0.9),  # correct
                annotation((HOSTILE_CLASS, 60, 10, 95, 40), 0.8),  # car read as the hostile class
                annotation(("car", 70, 70, 75, 75), 0.7),  # invented
                {
                    "label": HOSTILE_CLASS,
                    "x_min": HOSTILE_CLASS,
                    "y_min": 0,
                    "x_max": 1,
                    "y_max": 1,
                },  # defective
            ],
        ),
        asset("plain.jpg", [annotation(("car", 12, 12, 40, 40), 0.95)]),
    ]
    return _run(
        "hostile",
        work,
        write_json(work / "gt.json", gt),
        write_json(work / "pred.json", pred),
        CONFIDENCE_THRESHOLD=HOSTILE_CLASS,
    )


def warned(work: Path) -> StoredReport:
    """voc_padilla_100 swapped: detections (numeric ids, confidences) as GT, the VOC XML as predictions."""
    voc = THIRD_PARTY / "voc_padilla_100"
    return _run("warned", work, voc / "dets" / "abs_xyx2y2", voc / "gts" / "pascalvoc_format")


BUILDERS: Final[dict[str, Callable[[Path], StoredReport]]] = {
    "strong": strong,
    "weak": weak,
    "empty": empty,
    "many-classes": many_classes,
    "hostile": hostile,
    "warned": warned,
}


JOB: Final = "browser-reports"
INDEX: Final = "reports.json"  # name -> the stored report.html
FIXTURE: Final = "browser_reports"


def build_all(folder: Path) -> None:
    """Every report of `BUILDERS`, each in a folder of its own, and the index of their pages."""
    pages = {}
    for name, build in BUILDERS.items():
        (folder / name).mkdir()
        pages[name] = str(build(folder / name).html)
    (folder / INDEX).write_text(json.dumps(pages), encoding="utf-8")


def _start() -> None:
    start_helper_job(JOB, "browser_reports")


def pytest_collection_finish(session: pytest.Session) -> None:
    if collected(session, [FIXTURE]):
        _start()


@pytest.fixture(scope="session")
def browser_reports() -> dict[str, StoredReport]:
    """The reports the run's background job made, by name (started here if no worker started it)."""
    _start()
    pages = json.loads((wait_for(JOB) / INDEX).read_text(encoding="utf-8"))
    return {name: _stored(name, Path(html)) for name, html in pages.items()}


def _stored(name: str, html: Path) -> StoredReport:
    findings = json.loads((html.parent / "findings.json").read_text(encoding="utf-8"))
    # The sketches the page draws are its own data (sketches.json), not findings: read beside them.
    findings["sketches"] = json.loads((html.parent / "sketches.json").read_text(encoding="utf-8"))
    return StoredReport(name, html, findings)


if __name__ == "__main__":
    finish_job(JOB, build_all)
