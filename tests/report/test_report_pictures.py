"""Pages whose sketches carry their images: a COCO pair with `--images`, a YOLO folder with `images/`.

The COCO files are the third-party val2014 sample (tests/data); its images are made here (helpers/pictures,
named by the GT's `file_name`, boxes painted in). One is replaced by hostile bytes and one removed:
those two sketches say why on the page, every other one carries its picture, and the run succeeds.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers.node_run import one_error_line, run_node
from helpers.paths import THIRD_PARTY
from helpers.pictures import coco_pictures, scene, write_picture

from handler.cli import main as cli_main

COCO = THIRD_PARTY / "coco_val2014_100"
GT, PRED = COCO / "instances_val2014_100.json", COCO / "instances_val2014_fakebbox100_results.json"


def _report(store: Path) -> tuple[dict[str, Any], str]:
    (folder,) = (store / "reports").iterdir()
    findings = json.loads((folder / "findings.json").read_text(encoding="utf-8"))
    findings["sketches"] = json.loads((folder / "sketches.json").read_text(encoding="utf-8"))  # the page's
    return findings, (folder / "report.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def coco_images(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("coco") / "val2014"
    coco_pictures(GT, folder)
    return folder


def test_a_coco_pair_with_an_images_folder_draws_each_sketch_on_its_image(
    coco_images: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Spoil two of the sketched images (the first listed ones, known from a run without images).
    first = tmp_path / "first"
    assert cli_main([str(GT), str(PRED), "--store", str(first), "-q"]) == 0
    sketched = [sketch["asset_id"] for sketch in _report(first)[0]["sketches"]]
    assert _report(first)[0]["pictures"] is None and "<image " not in _report(first)[1]
    images = tmp_path / "images"
    images.symlink_to(coco_images, target_is_directory=True)
    spoiled, gone = coco_images / sketched[0], coco_images / sketched[1]
    kept = gone.read_bytes()
    spoiled.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    gone.unlink()
    try:
        store = tmp_path / "store"
        assert cli_main([str(GT), str(PRED), "--images", str(images), "--store", str(store), "-q"]) == 0
    finally:
        gone.write_bytes(kept)
    capsys.readouterr()
    findings, page = _report(store)
    by_id = {sketch["asset_id"]: sketch for sketch in findings["sketches"]}
    assert list(by_id) == sketched
    assert findings["pictures"] == {
        "root": str(images),
        "found_by": "given",
        "drawn": len(sketched) - 2,
        "not_drawn": 2,
        "note": None,
    }
    assert by_id[sketched[0]]["image"]["jpeg"] is None and by_id[sketched[0]]["image"]["note"].startswith(
        "not an image"
    )
    assert by_id[sketched[1]]["image"]["note"] == "not found: no image of that name in the folder"
    for asset_id in sketched[2:]:
        image = by_id[asset_id]["image"]
        assert image["jpeg"].startswith("data:image/jpeg;base64,") and image["note"] is None
        assert (image["width"], image["height"]) == (by_id[asset_id]["width"], by_id[asset_id]["height"])
    # The page draws each picture under its boxes, as often as the sketch is shown, and notes the two.
    shown = len(re.findall(r'<svg class="sketch', page))
    pictured = len(re.findall(r'<svg class="sketch pictured"', page))
    assert pictured == len(re.findall(r'<image href="data:image/jpeg;base64,[A-Za-z0-9+/=]+"', page)) > 0
    assert shown - pictured == page.count('data-field="image_note"') > 0
    assert f"{len(sketched) - 2} images from {images}" in page and "2 images not drawn" in page


def _yolo_folder(root: Path) -> tuple[Path, Path]:
    """ds/labels + ds/images (640x480, no sizes.json), and predictions: a GT box of each image, moved."""
    rows = {f"img{n}": [(n % 2, 0.3 + 0.05 * n, 0.4, 0.2, 0.3), (1, 0.7, 0.6, 0.15, 0.2)] for n in range(6)}
    for stem, boxes in rows.items():
        labels = root / "ds" / "labels" / f"{stem}.txt"
        labels.parent.mkdir(parents=True, exist_ok=True)
        labels.write_text("".join(f"{c} {x} {y} {w} {h}\n" for c, x, y, w, h in boxes), encoding="utf-8")
        predicted = root / "pred" / f"{stem}.txt"
        predicted.parent.mkdir(parents=True, exist_ok=True)
        predicted.write_text(
            "".join(f"{c} {x + 0.01} {y} {w} {h} 0.9\n" for c, x, y, w, h in boxes[:1]), encoding="utf-8"
        )
        painted = [
            (
                "cat" if c else "dog",
                (x - w / 2) * 640,
                (y - h / 2) * 480,
                (x + w / 2) * 640,
                (y + h / 2) * 480,
            )
            for c, x, y, w, h in boxes
        ]
        write_picture(root / "ds" / "images" / f"{stem}.jpg", scene(640, 480, painted))
    (root / "ds" / "labels" / "classes.txt").write_text("dog\ncat\n", encoding="utf-8")
    return root / "ds" / "labels", root / "pred"


def test_a_yolo_folder_draws_the_images_beside_its_labels_at_their_own_aspect(tmp_path: Path) -> None:
    gt, pred = _yolo_folder(tmp_path)
    run = run_node(
        tmp_path / "store", GT_DATASET=str(gt), PRED_DATASET=str(pred), PRED_NAMES=str(gt / "classes.txt")
    )
    assert run.code == 0, run.err
    findings, page = _report(tmp_path / "store")
    assert findings["pictures"]["found_by"] == "beside the yolo labels"
    assert findings["pictures"]["root"] == str(tmp_path / "ds" / "images")
    assert findings["pictures"]["drawn"] == len(findings["sketches"]) > 0
    for sketch in findings["sketches"]:  # the labels give no size: the frame takes the picture's
        assert (sketch["width"], sketch["height"], sketch["aspect"]) == (1, 1, 0.75)
        assert (sketch["image"]["width"], sketch["image"]["height"]) == (640, 480)
    assert "(found beside the yolo labels)" in page


def test_images_given_in_the_node_inputs_that_name_no_folder_are_one_error_line(tmp_path: Path) -> None:
    run = run_node(
        tmp_path / "store", GT_DATASET=str(GT), PRED_DATASET=str(PRED), IMAGES=str(tmp_path / "none")
    )
    assert "IMAGES" in one_error_line(run) and "no such folder" in run.err
