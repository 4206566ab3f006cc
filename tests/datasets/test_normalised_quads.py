"""A YOLO OBB pair on images of unknown size is scored on its quadrilaterals as written in 0-1.

The oracle: the COCO val2014 pair's boxes (GT and cocoapi's detections), each turned about its
centre on its own image (which is not square), written as YOLO OBB folders without sizes; shapely's
polygon IoU of the quadrilaterals in pixels and the reference greedy give the counts the node must
give from the 0-1 corners alone.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from helpers import reference as ref

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


def test_a_yolo_obb_pair_without_sizes_counts_as_shapely_on_the_pixel_quadrilaterals(
    folders: tuple[Path, Path, dict[str, int]],
) -> None:
    gt, pred, want = folders
    assert want["correct"] and want["shifted"] and want["class_confused"]
    counts = PrelabelingEfficiency(IOU_MIN, IOU_PERFECT, CONFIDENCE).evaluate(str(gt), str(pred)).counts
    got = {name: getattr(counts, name) for name in ref.OUTCOME_NAMES}
    assert got == {name: want[name] for name in ref.OUTCOME_NAMES}
