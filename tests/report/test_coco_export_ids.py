"""The COCO export keeps the user's own image and category ids when the report knows them (a COCO
ground truth), so the file joins their data by id; it numbers them from 1 only when it does not,
and says which in its note line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.builders import annotation, asset, write_json
from helpers.paths import THIRD_PARTY

from handler.boxes import BoxTable, SourceIds
from handler.cli import main as cli_main
from handler.engine.pre_label_boxes import ChunkImages, candidate_chunk, read_chunks

VOC = THIRD_PARTY / "voc_padilla_100"
# A COCO rendering with image ids like 20180000001 and its own category order.
COCO_GT = VOC / "gts" / "coco_format_v2" / "instances_v2.json"
DETECTIONS = VOC / "dets" / "abs_xyx2y2"


def _export(store: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, Any], str]:
    capsys.readouterr()
    assert cli_main(["export", "latest", "--to", "coco", "--out", str(out), "--store", str(store)]) == 0
    return json.loads(out.read_text(encoding="utf-8")), capsys.readouterr().err


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_coco_ground_truths_ids_are_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], workers: str
) -> None:
    store = tmp_path / "store"
    run = [str(COCO_GT), str(DETECTIONS), "--pred-names", str(VOC / "voc.names"), "--workers", workers]
    assert cli_main([*run, "--store", str(store), "--confidence-threshold", "0"]) == 0
    exported, note = _export(store, tmp_path / "pre-labels.json", capsys)
    gt = json.loads(COCO_GT.read_text(encoding="utf-8"))
    image_ids = {image["file_name"]: image["id"] for image in gt["images"]}
    category_ids = {category["name"]: category["id"] for category in gt["categories"]}
    assert exported["images"] and all(
        image["id"] == image_ids[image["file_name"]] for image in exported["images"]
    )
    assert all(category["id"] == category_ids[category["name"]] for category in exported["categories"])
    assert {a["image_id"] for a in exported["annotations"]} <= set(image_ids.values())
    assert {a["category_id"] for a in exported["annotations"]} <= set(category_ids.values())
    assert (
        note.strip()
        == "note: image and category ids are the ground truth's own: the file joins your COCO data by id"
    )
    # read back as predictions against the same ground truth, by those ids: every box lands
    again = tmp_path / "again"
    assert cli_main([str(COCO_GT), str(tmp_path / "pre-labels.json"), "--store", str(again), "--json"]) == 0
    findings = json.loads(capsys.readouterr().out)
    assert findings["dataset"]["predictions"] == len(exported["annotations"])
    assert findings["dataset"]["pred_only_images"] == 0


def test_a_class_only_the_predictions_have_is_numbered_after_the_largest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt = {
        "images": [{"id": 70, "file_name": "a.jpg", "width": 100, "height": 100}],
        "categories": [{"id": 9, "name": "car"}, {"id": 4, "name": "bus"}],
        "annotations": [{"id": 1, "image_id": 70, "category_id": 9, "bbox": [10, 10, 30, 30]}],
    }
    gt_file = write_json(tmp_path / "gt.json", gt)
    pred = write_json(
        tmp_path / "pred.json",
        [
            asset(
                "a.jpg", [annotation(("car", 10, 10, 40, 40), 0.9), annotation(("tram", 50, 50, 90, 90), 0.9)]
            )
        ],
    )
    store = tmp_path / "store"
    assert cli_main([str(gt_file), str(pred), "--store", str(store), "--confidence-threshold", "0"]) == 0
    exported, _ = _export(store, tmp_path / "out.json", capsys)
    assert {c["name"]: c["id"] for c in exported["categories"]} == {"car": 9, "bus": 4, "tram": 10}
    assert [image["id"] for image in exported["images"]] == [70]


def test_without_coco_ids_they_are_numbered_and_the_note_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    box = annotation(("car", 10, 10, 40, 40))
    gt = write_json(tmp_path / "gt.json", [asset("b.jpg", [box]), asset("a.jpg", [box])])
    pred = write_json(
        tmp_path / "pred.json", [asset(n, [{**box, "confidence": 0.9}]) for n in ("a.jpg", "b.jpg")]
    )
    store = tmp_path / "store"
    assert cli_main([str(gt), str(pred), "--store", str(store), "--confidence-threshold", "0"]) == 0
    exported, note = _export(store, tmp_path / "out.json", capsys)
    assert [(i["id"], i["file_name"]) for i in exported["images"]] == [(1, "b.jpg"), (2, "a.jpg")]
    assert note.strip() == (
        "note: image and category ids are numbered from 1 (the ground truth gave no COCO ids): "
        "join the file to your data by file_name and category name"
    )


def _chunk(assets: list[str], classes: list[str], own: SourceIds | None) -> bytes:
    pred = BoxTable.build(
        [[0, 0, 5, 5]] * len(assets), [0] * len(assets), range(len(assets)), [0.9] * len(assets)
    )
    sizes = np.full(len(assets), 10.0)
    return bytes(candidate_chunk(pred, ChunkImages(assets, classes, sizes, sizes, False, own), 0.5))


def test_the_shards_chunks_join_their_ids_by_image_and_class_name() -> None:
    """Two shards' chunks name their own classes: the ids follow the names, images in shard order."""
    first = _chunk(["a", "b"], ["car", "bus"], SourceIds(["7", "8"], ["3", "5"]))
    second = _chunk(["c"], ["bus", "tram"], SourceIds(["9"], ["5", ""]))
    joined = read_chunks([first, second])
    assert joined.own_ids == SourceIds(["7", "8", "9"], ["3", "5", ""])
    assert read_chunks([first, _chunk(["c"], ["bus"], None)]).own_ids is None  # one shard without ids
