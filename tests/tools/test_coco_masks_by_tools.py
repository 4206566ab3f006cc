"""The COCO val2014 pair on masks (GT polygons, cocoapi's RLE mask results), rendered by the
tools' own libraries (`helpers/tool_renderings.py`), both sides, scored by `prelabel-eval`: the
oracle's 0.30 and counts (`helpers/coco_masks.py`), or, where a converter itself changes the
masks, the oracle's figures on the masks the converter wrote.

- label-studio-sdk: its COCO import (each object a rectangle then a polygon per part) and its
  brush encoder, as tasks, and as the real server exports them (JSON, and JSON-MIN for the GT);
- datumaro: its COCO import exported as CVAT for images (a group per object: its box and its
  polygons or mask) and as COCO again (polygons, or every object an RLE marked `iscrowd`);
- ultralytics' `convert_coco(use_segments=True)` YOLO-seg lines for the GT (parts merged into
  one polygon through their closest points, fractions written with `%g`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.coco_masks import PAIR_COUNTS, oracle_of
from helpers.label_studio_prepared import COCO_MASKS_RESULTS, COCO_PAIR, COCO_PAIR_GT, CONVERTED_EXPORTS
from helpers.needs import existing
from helpers.node_run import run_cli
from helpers.tool_files import coco_masks, write_yolo_seg
from helpers.tool_renderings import (
    datumaro_coco,
    label_studio_converted,
    results_as_instances,
    ultralytics_yolo_seg,
    yolo_seg_as_instances,
)

SCORED = re.compile(
    r"correct (\d+)  shifted (\d+)  class confused (\d+)  false positive (\d+)  false negative (\d+)"
)


@pytest.fixture(scope="module")
def pair() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    existing(COCO_PAIR, "the third-party data")
    return json.loads(COCO_PAIR_GT.read_text()), json.loads(COCO_MASKS_RESULTS.read_text())


def scored(store: Path, gt: Path, pred: Path) -> tuple[dict[str, int], float]:
    """`prelabel-eval GT PRED`'s five counts and its score (3 decimals), on masks."""
    run = run_cli(str(gt), str(pred), "-q", "--store", str(store))
    out = run.stdout.decode()
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Scored on masks" in out, out
    counts = SCORED.search(out)
    score = re.search(r"assistance score (\d\.\d+)", out)
    assert counts is not None and score is not None, out
    return dict(zip(PAIR_COUNTS, map(int, counts.groups()), strict=True)), float(score.group(1))


def the_oracles(gt: dict[str, Any], results: list[dict[str, Any]]) -> tuple[dict[str, int], float]:
    evaluation = oracle_of(gt, results)
    counts = {k: v for k, v in evaluation.counts.items() if k != "total"}
    return counts, round(float(evaluation.score), 3)


def test_label_studio_sdk_s_coco_import_and_brushes_score_as_the_coco_files(
    pair: Any, tmp_path: Path
) -> None:
    gt, results = pair
    tasks, _ = label_studio_converted(tmp_path / "converter", gt, results)
    kinds = {r["type"] for t in tasks for r in t["annotations"][0]["result"]}
    assert kinds == {"rectanglelabels", "polygonlabels"}  # a rectangle beside each object's polygons
    export = tmp_path / "tasks.json"
    export.write_text(json.dumps(tasks))
    assert scored(tmp_path, export, export) == (PAIR_COUNTS, 0.299)


def test_the_label_studio_server_s_exports_of_that_rendering_score_as_the_coco_files(
    pair: Any, label_studio_prepared: Callable[[str], Path], tmp_path: Path
) -> None:
    """The JSON export both sides; the JSON-MIN export (annotations only: each control's regions
    in a list of their own, the rectangles apart from the polygons) as the GT."""
    folder = label_studio_prepared("coco-converted")
    full, minimal = (folder / CONVERTED_EXPORTS[kind] for kind in ("JSON", "JSON_MIN"))
    assert scored(tmp_path / "json", full, full) == (PAIR_COUNTS, 0.299)
    assert "label_rectangles" in json.loads(minimal.read_text())[0]
    assert scored(tmp_path / "min", minimal, full) == (PAIR_COUNTS, 0.299)


def test_datumaro_s_cvat_export_of_its_coco_import_scores_as_the_coco_files(
    pair: Any, tmp_path: Path
) -> None:
    """Each object a group: its box and its polygons (or its mask, the crowd regions marked
    `is_crowd`); the scores kept as attributes (allow_undeclared_attrs, else datumaro drops them)."""
    gt, results = pair
    for side, instances in (("gt", gt), ("pred", results_as_instances(gt, results))):
        dataset = datumaro_coco(tmp_path / f"{side}-coco", instances)
        dataset.export(str(tmp_path / side), "cvat", save_media=False, allow_undeclared_attrs=True)
    xml = (tmp_path / "gt" / "default.xml").read_text()
    assert xml.count("<box") == len(gt["annotations"]) and "group_id" in xml
    assert scored(tmp_path, tmp_path / "gt" / "default.xml", tmp_path / "pred" / "default.xml") == (
        PAIR_COUNTS,
        0.299,
    )


@pytest.mark.parametrize("mode", ["guess", "polygons", "mask"])
def test_datumaro_s_coco_exports_score_as_the_oracle_on_what_they_hold(
    pair: Any, mode: str, tmp_path: Path
) -> None:
    """datumaro's COCO exporter changes the masks: `guess` and `polygons` write each RLE mask as
    the polygons of its outline, `mask` writes every object as an RLE marked `iscrowd: 1` (so the
    ground truth has no object left). Our score is the oracle's on the files it wrote."""
    gt, results = pair
    files = []
    for side, instances in (("gt", gt), ("pred", results_as_instances(gt, results))):
        dataset = datumaro_coco(tmp_path / f"{side}-coco", instances)
        dataset.export(str(tmp_path / side), "coco_instances", save_media=False, segmentation_mode=mode)
        files.append(tmp_path / side / "annotations" / "instances_default.json")
    written_gt, written_pred = (json.loads(f.read_text()) for f in files)
    expected = the_oracles(written_gt, written_pred["annotations"])
    if mode == "mask":
        assert all(a["iscrowd"] for a in written_gt["annotations"]) and expected[0]["false_negative"] == 0
        return  # nothing to score: the node says so rather than scoring masks
    assert expected != (PAIR_COUNTS, 0.299)  # the outlines are not the masks
    assert scored(tmp_path, *files) == expected


def test_ultralytics_yolo_seg_lines_score_as_the_oracle_on_what_they_hold(pair: Any, tmp_path: Path) -> None:
    """The GT by ultralytics' convert_coco, the predictions (RLE, which convert_coco cannot take)
    by the exact outline writer of tool_files; with the GT's sizes in its sizes.json."""
    gt, results = pair
    gt_folder = ultralytics_yolo_seg(tmp_path / "gt", gt)
    (gt_folder / "sizes.json").write_text(
        json.dumps({i["file_name"]: [i["width"], i["height"]] for i in gt["images"]})
    )
    labels = (gt_folder / "classes.txt").read_text().splitlines()
    pred_folder = write_yolo_seg(tmp_path / "pred", coco_masks(gt, results), labels)
    expected = the_oracles(yolo_seg_as_instances(gt_folder, gt), results)
    merged = sum(len(a["segmentation"]) > 1 for a in gt["annotations"] if not a["iscrowd"])
    assert merged == 75  # objects of several parts, each one merged polygon
    assert scored(tmp_path, gt_folder, pred_folder) == expected
