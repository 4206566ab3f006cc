"""The way back: the pre-labels `prelabel-eval export` writes load in the
tools themselves with the boxes the policy keeps.

- Label Studio: a project made with the exported labeling config (`.xml`), the exported tasks
  imported through label-studio-sdk, the project exported again through the export API: the same
  count, classes, scores and boxes (within 0.01 px) as the predictions the policy keeps.
- CVAT: the XML loaded by datumaro's CVAT importer (CVAT's own dataset library; it wants each
  image's file, and empty stand-ins serve), and the COCO file by its COCO importer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.label_studio_server import create_project, export, import_tasks
from helpers.pre_labels import (
    TOLERANCE_PX,
    Report,
    boxes,
    expected,
    gt,
    read_label_studio,
    routed_report,
    same_boxes,
)
from helpers.pre_labels import export as export_pre_labels
from label_studio_sdk import LabelStudio


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    return routed_report(tmp_path_factory.mktemp("store"))


def test_label_studio_imports_the_pre_labels_with_their_config_and_gives_them_back(
    report: Report, label_studio_client: LabelStudio, tmp_path: Path
) -> None:
    tasks_file = export_pre_labels(report, "label-studio", tmp_path / "pre-labels.json")
    tasks = json.loads(tasks_file.read_text())
    project = create_project(
        label_studio_client, (tmp_path / "pre-labels.xml").read_text(), "pre-labels back"
    )
    assert len(import_tasks(label_studio_client, project, tasks)) == len(tasks)
    exported = tmp_path / "project-export.json"
    exported.write_bytes(export(label_studio_client, project))

    back = json.loads(exported.read_text())

    wanted = expected(report, "routing")
    same_boxes(boxes(read_label_studio(exported, gt())), wanted)
    regions = [region for task in back for region in task["predictions"][0]["result"]]
    assert len(regions) == len(wanted[0]) == sum(len(t["predictions"][0]["result"]) for t in tasks)
    sent = {t["data"]["image"]: t["predictions"][0] for t in tasks}
    for task in back:  # each prediction as sent: its model version, its score, its regions' scores
        (prediction,) = task["predictions"]
        original = sent[task["data"]["image"]]
        assert prediction["model_version"] == original["model_version"]
        assert prediction["score"] == pytest.approx(original["score"])
        assert [r["score"] for r in prediction["result"]] == [r["score"] for r in original["result"]]


def _datumaro_boxes(dataset: Any) -> tuple[list[tuple[str, str, float]], np.ndarray]:
    """(image stem, class, score) and xyxy of every box datumaro loaded, sorted as `boxes` sorts."""
    import datumaro as dm

    labels = dataset.categories()[dm.AnnotationType.label]
    rows = [
        ((item.id, labels[a.label].name, round(float(a.attributes["score"]), 6)), a.get_bbox())
        for item in dataset
        for a in item.annotations
    ]
    xyxy = np.array([[x, y, x + w, y + h] for _, (x, y, w, h) in rows]).reshape(-1, 4)
    order = sorted(range(len(rows)), key=lambda i: (rows[i][0], *xyxy[i].round(1).tolist()))
    return [rows[i][0] for i in order], xyxy[order]


def _by_stem(
    found: tuple[list[tuple[str, str, float]], np.ndarray],
) -> tuple[list[tuple[str, str, float]], np.ndarray]:
    """Asset ids as datumaro names items: the file name without its extension."""
    keys = [(Path(asset).stem, name, score) for asset, name, score in found[0]]
    order = sorted(range(len(keys)), key=lambda i: (keys[i], *found[1][i].round(1).tolist()))
    return [keys[i] for i in order], found[1][order]


def _stand_ins(folder: Path, names: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_bytes(b"")


def same_as_datumaro(
    found: tuple[list[tuple[str, str, float]], np.ndarray],
    wanted: tuple[list[tuple[str, str, float]], np.ndarray],
) -> None:
    assert found[0] == wanted[0]
    # datumaro keeps box coordinates as float32: about 3e-5 px on these images
    np.testing.assert_allclose(found[1], wanted[1], atol=TOLERANCE_PX, rtol=0)


def test_datumaro_loads_the_cvat_xml_with_the_same_boxes(report: Report, tmp_path: Path) -> None:
    import datumaro as dm

    folder = tmp_path / "cvat"
    xml = export_pre_labels(report, "cvat", folder / "default.xml")
    wanted = expected(report, "routing")
    _stand_ins(folder / "images", sorted({asset for asset, _, _ in wanted[0]} | set(gt().dataset.asset_ids)))

    dataset = dm.Dataset.import_from(str(xml.parent), "cvat")

    assert len(dataset) == len(gt().dataset.asset_ids)
    same_as_datumaro(_datumaro_boxes(dataset), _by_stem(wanted))


def test_datumaro_loads_the_coco_file_with_the_same_boxes(report: Report, tmp_path: Path) -> None:
    import datumaro as dm

    folder = tmp_path / "coco"
    coco = export_pre_labels(report, "coco", folder / "annotations" / "instances_default.json")
    (folder / "images" / "default").mkdir(parents=True)

    dataset = dm.Dataset.import_from(str(coco), "coco_instances")

    assert len(dataset) == len(gt().dataset.asset_ids)
    same_as_datumaro(_datumaro_boxes(dataset), _by_stem(expected(report, "routing")))
