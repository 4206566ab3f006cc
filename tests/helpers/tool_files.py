"""Files as the labeling tools write them: CVAT for images XML written by datumaro (CVAT's own
dataset library), and Label Studio tasks made from a COCO pair (for the real server to import
and export).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers.label_studio_server import rectangle


@dataclass(frozen=True)
class Shape:
    """One object of an image: a box (xyxy pixels) or a polygon (flat x, y points)."""

    label: str
    xyxy: tuple[float, float, float, float] | None = None
    polygon: tuple[float, ...] | None = None
    score: float | None = None
    occluded: bool = False
    rotation: float = 0.0


@dataclass(frozen=True)
class ToolImage:
    name: str
    width: int
    height: int
    shapes: list[Shape] = field(default_factory=list)


def write_cvat(folder: Path, images: Sequence[ToolImage], labels: Sequence[str]) -> Path:
    """A CVAT for images 1.1 XML of `images`, written by datumaro's CVAT exporter; its path."""
    import datumaro as dm
    from datumaro.components.annotation import Bbox, Polygon, RotatedBbox
    from datumaro.components.media import Image

    index = {name: i for i, name in enumerate(labels)}

    def annotation(shape: Shape) -> Any:
        attributes: dict[str, Any] = {"occluded": shape.occluded}
        if shape.score is not None:
            attributes["score"] = shape.score
        if shape.polygon is not None:
            return Polygon(list(shape.polygon), label=index[shape.label], attributes=attributes)
        assert shape.xyxy is not None
        x0, y0, x1, y1 = shape.xyxy
        if shape.rotation:
            centre = ((x0 + x1) / 2, (y0 + y1) / 2)
            return RotatedBbox(*centre, x1 - x0, y1 - y0, shape.rotation, label=index[shape.label])
        return Bbox(x0, y0, x1 - x0, y1 - y0, label=index[shape.label], attributes=attributes)

    items = [
        dm.DatasetItem(
            id=Path(image.name).stem,
            media=Image.from_file(path=image.name, size=(image.height, image.width)),
            annotations=[annotation(shape) for shape in image.shapes],
        )
        for image in images
    ]
    dataset = dm.Dataset.from_iterable(items, categories=list(labels))
    dataset.export(str(folder), "cvat", save_media=False, allow_undeclared_attrs=True)
    return folder / "default.xml"


def coco_images(gt: dict[str, Any], results: list[dict[str, Any]] | None = None) -> list[ToolImage]:
    """A COCO GT file's images with its boxes (crowd regions left out, as COCO's readers do), or
    with a results list's detections when `results` is given."""
    names = {c["id"]: c["name"] for c in gt["categories"]}
    entries = results if results is not None else [a for a in gt["annotations"] if not a.get("iscrowd")]
    by_image: dict[int, list[Shape]] = defaultdict(list)
    for entry in entries:
        x, y, w, h = entry["bbox"]
        by_image[entry["image_id"]].append(
            Shape(names[entry["category_id"]], (x, y, x + w, y + h), score=entry.get("score"))
        )
    return [ToolImage(i["file_name"], i["width"], i["height"], by_image[i["id"]]) for i in gt["images"]]


def label_studio_tasks(
    gt: Sequence[ToolImage], predicted: Sequence[ToolImage] | None, *, model_version: str, image_root: str
) -> list[dict[str, Any]]:
    """One task per image: `data.image` under `image_root`, the GT as its annotation, the
    predicted boxes as its prediction (each region with its score)."""
    tasks = []
    for position, image in enumerate(gt):
        size = (image.width, image.height)
        task: dict[str, Any] = {
            "data": {"image": f"{image_root}{image.name}"},
            "annotations": [{"result": [_region(s, size) for s in image.shapes]}],
        }
        if predicted is not None:
            shapes = predicted[position].shapes
            task["predictions"] = [
                {"model_version": model_version, "result": [_region(s, size) for s in shapes]}
            ]
        tasks.append(task)
    return tasks


def _region(shape: Shape, size: tuple[int, int]) -> dict[str, Any]:
    assert shape.xyxy is not None
    return rectangle(shape.label, shape.xyxy, size, score=shape.score, rotation=shape.rotation)
