"""A YOLO OBB pair on images of unknown size is scored on its quadrilaterals as written in 0-1.

The oracle: the COCO val2014 pair's boxes (GT and cocoapi's detections), each turned about its
centre on its own image (which is not square), written as YOLO OBB folders without sizes; shapely's
polygon IoU of the quadrilaterals in pixels and the reference greedy give the counts the node must
give from the 0-1 corners alone.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import reference as ref

from handler.boxes import BoxTable
from handler.cli import main
from handler.datasets.frames import scale_to_pixels
from handler.engine.drawn_boxes import ToSketch, image_sketches
from handler.engine.evaluation import Thresholds, evaluate
from handler.engine.rotated import convex_quads, rectangles
from handler.metric import PrelabelingEfficiency

COCO = Path(__file__).parent.parent / "data" / "third_party" / "coco_val2014_100"
IOU_MIN, IOU_PERFECT, CONFIDENCE = 0.3, 0.8, 0.5
Quad = list[tuple[float, float]]


def _turn(box: list[float], degrees: float) -> Quad:
    """The corners of COCO's `[x, y, w, h]` turned clockwise on the image about its centre."""
    x, y, w, h = box
    cx, cy = x + w / 2, y + h / 2
    cos, sin = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    offsets = ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2))
    return [(cx + dx * cos - dy * sin, cy + dx * sin + dy * cos) for dx, dy in offsets]


def _angle(category: int, index: int) -> float:
    """A turn by class (an object and its detection turn alike), a few degrees apart by index."""
    return 12.0 * (category % 7) - 36.0 + 3.0 * (index % 3)


def _line(category: int, quad: Quad, width: float, height: float, score: float | None) -> str:
    numbers = [v for x, y in quad for v in (x / width, y / height)]
    return " ".join([str(category), *map(repr, numbers), *([] if score is None else [repr(score)])])


def _side(records: list[dict[str, Any]], images: dict[int, dict[str, Any]]) -> dict[int, list[Any]]:
    """Per image: (category, quadrilateral in pixels, score) of each record."""
    side: dict[int, list[Any]] = {image: [] for image in images}
    for index, record in enumerate(records):
        quad = _turn(record["bbox"], _angle(record["category_id"], index))
        side[record["image_id"]].append((record["category_id"], quad, record.get("score")))
    return side


def _write(folder: Path, side: dict[int, list[Any]], images: dict[int, dict[str, Any]], names: str) -> None:
    folder.mkdir()
    (folder / "classes.txt").write_text(names)
    for image_id, rows in side.items():
        image = images[image_id]
        lines = [_line(c, q, image["width"], image["height"], s) for c, q, s in rows]
        (folder / f"{Path(image['file_name']).stem}.txt").write_text("".join(f"{ln}\n" for ln in lines))


def _pixels(line: str, width: float, height: float) -> Quad:
    """A written line's corners in pixels: what the oracle measures."""
    values = [float(v) for v in line.split()[1:9]]
    return [(values[i] * width, values[i + 1] * height) for i in range(0, 8, 2)]


def _oracle(gt: dict[int, list[Any]], pred: dict[int, list[Any]], images: dict[int, dict[str, Any]]) -> Any:
    import shapely

    reference, pair_ious = [], []
    for image_id, image in images.items():
        w, h = image["width"], image["height"]
        gt_shapes = [shapely.Polygon(_pixels(_line(c, q, w, h, None), w, h)) for c, q, _ in gt[image_id]]
        pred_shapes = [shapely.Polygon(_pixels(_line(c, q, w, h, s), w, h)) for c, q, s in pred[image_id]]
        reference.append(
            ref.RefImage(
                tuple(ref.GtBox((0, 0, 0, 0), c) for c, _, _ in gt[image_id]),
                tuple(ref.PredBox((0, 0, 0, 0), c, s) for c, _, s in pred[image_id]),
            )
        )

        def iou(i: int, j: int, p: list[Any] = pred_shapes, g: list[Any] = gt_shapes) -> float:
            overlap = p[i].intersection(g[j]).area
            return float(overlap / (p[i].area + g[j].area - overlap))

        pair_ious.append(iou)
    return ref.evaluate(reference, CONFIDENCE, IOU_MIN, IOU_PERFECT, pair_ious)


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, int]]:
    document = json.loads((COCO / "instances_val2014_100.json").read_text())
    results = json.loads((COCO / "instances_val2014_fakebbox100_results.json").read_text())
    images = {image["id"]: image for image in document["images"]}
    assert all(image["width"] != image["height"] for image in images.values())
    gt = _side([a for a in document["annotations"] if not a["iscrowd"]], images)
    pred = _side([r for r in results if r["image_id"] in images], images)
    # YOLO class i is line i: COCO's category ids, a placeholder for the ids it leaves out.
    named = {c["id"]: c["name"] for c in document["categories"]}
    names = "".join(f"{named.get(i, f'unused {i}')}\n" for i in range(max(named) + 1))
    root = tmp_path_factory.mktemp("obb")
    _write(root / "gt", gt, images, names)
    _write(root / "pred", pred, images, names)
    return root / "gt", root / "pred", _oracle(gt, pred, images).counts


@pytest.mark.parametrize("pred_sized", [False, True], ids=["no sizes", "sizes on the predictions' side"])
def test_a_yolo_obb_pair_without_sizes_counts_as_shapely_on_the_pixel_quadrilaterals(
    folders: tuple[Path, Path, dict[str, int]], pred_sized: bool, tmp_path: Path
) -> None:
    """Both sides in 0-1: scored there. The predictions' sizes given: the GT's quadrilaterals are
    scaled to pixels as written when the sides are paired, then their rectangles taken."""
    gt, pred, want = folders
    assert want["correct"] and want["shifted"] and want["class_confused"]
    if pred_sized:
        pred = shutil.copytree(pred, tmp_path / "pred")
        document = json.loads((COCO / "instances_val2014_100.json").read_text())
        sizes = {image["file_name"]: [image["width"], image["height"]] for image in document["images"]}
        (pred / "sizes.json").write_text(json.dumps(sizes))
    counts = PrelabelingEfficiency(IOU_MIN, IOU_PERFECT, CONFIDENCE).evaluate(str(gt), str(pred)).counts
    got = {name: getattr(counts, name) for name in ref.OUTCOME_NAMES}
    assert got == {name: want[name] for name in ref.OUTCOME_NAMES}


def test_a_quadrilateral_scaled_to_pixels_is_the_rectangle_it_draws_there() -> None:
    """A rectangle turned 30 degrees on a 640x480 image is a parallelogram in 0-1; scaled back it
    is that rectangle again, not the one fitted in 0-1 scaled and fitted again."""
    width, height = 640.0, 480.0
    pixels = np.array([_turn([200.0, 100.0, 160.0, 40.0], 30.0)])
    quad = convex_quads(pixels / [width, height])
    xyxy, angle = rectangles(quad)
    table = BoxTable.build(xyxy, [0], [0], angle=angle, quads=quad)
    scaled = scale_to_pixels(table, np.array([width]), np.array([height]))
    assert scaled.quads is None and scaled.angle[0] == pytest.approx(30.0)
    np.testing.assert_allclose(scaled.xyxy[0], [200.0, 100.0, 360.0, 140.0])
    fitted = scale_to_pixels(table.with_columns(quads=None), np.array([width]), np.array([height]))
    assert fitted.area[0] > 1.1 * scaled.area[0]  # fitted in 0-1: wider


def test_a_sketch_draws_each_quadrilateral_as_written() -> None:
    """In 0-1 on an image of unknown size a quadrilateral is drawn by its four corners; a
    rectangle beside it is drawn as its box."""
    quad = convex_quads(np.array([_turn([200.0, 100.0, 160.0, 40.0], 30.0)]) / [640.0, 480.0])
    xyxy, angle = rectangles(quad)
    gt = BoxTable.build(xyxy, [0], [0], angle=angle, quads=quad)
    pred = BoxTable.build(np.array([[0.1, 0.1, 0.2, 0.2]]), [0], [0])
    evaluation = evaluate(gt, pred, 1, Thresholds(IOU_MIN, IOU_PERFECT, 0.0))
    (sketch,) = image_sketches([ToSketch(evaluation, 0, "a", ["car"], (math.nan, math.nan, True))])
    drawn, box = sketch.boxes
    assert drawn.outline == (tuple(np.round(quad[0], 3).ravel().tolist()),) and box.outline == ()


def test_a_yolo_obb_export_of_the_run_writes_the_quadrilaterals_back(
    folders: tuple[Path, Path, dict[str, int]], tmp_path: Path
) -> None:
    """The pre-labels exported as YOLO OBB are the quadrilaterals read (corners, not the rectangles
    fitted in 0-1): scored against the GT again, they give the oracle's counts."""
    gt, pred, want = folders
    store, out = tmp_path / "store", tmp_path / "labels"
    thresholds = ["--iou-min", str(IOU_MIN), "--iou-perfect", str(IOU_PERFECT), "--confidence-threshold"]
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["run", str(gt), str(pred), "--store", str(store), *thresholds, str(CONFIDENCE)]) == 0
        policy = ["--policy", "threshold", str(CONFIDENCE)]
        assert (
            main(["export", "latest", "--store", str(store), "--to", "yolo-obb", "--out", str(out), *policy])
            == 0
        )
    counts = PrelabelingEfficiency(IOU_MIN, IOU_PERFECT, CONFIDENCE).evaluate(str(gt), str(out)).counts
    assert {name: getattr(counts, name) for name in ref.OUTCOME_NAMES} == {
        name: want[name] for name in ref.OUTCOME_NAMES
    }
