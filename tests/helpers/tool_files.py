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
    """One object of an image: a box (xyxy pixels), a polygon (flat x, y points) or a mask (a
    COCO RLE, decoded by pycocotools when a file is written: one bitmap at a time)."""

    label: str
    xyxy: tuple[float, float, float, float] | None = None
    polygon: tuple[float, ...] | None = None
    mask: dict[str, Any] | None = None
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
    from datumaro.components.annotation import Bbox, Mask, Polygon, RotatedBbox
    from datumaro.components.media import Image

    index = {name: i for i, name in enumerate(labels)}

    def annotation(shape: Shape) -> Any:
        attributes: dict[str, Any] = {"occluded": shape.occluded}
        if shape.score is not None:
            attributes["score"] = shape.score
        if shape.polygon is not None:
            return Polygon(list(shape.polygon), label=index[shape.label], attributes=attributes)
        if shape.mask is not None:
            rle = shape.mask
            return Mask(image=lambda: bitmap(rle), label=index[shape.label], attributes=attributes)
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
    if shape.polygon is not None or shape.mask is not None:
        return mask_region(shape, size)
    assert shape.xyxy is not None
    return rectangle(shape.label, shape.xyxy, size, score=shape.score, rotation=shape.rotation)


def bitmap(rle: dict[str, Any]) -> Any:
    """(height, width) uint8 0/1 of a COCO RLE (pycocotools)."""
    from pycocotools import mask as coco_mask

    return coco_mask.decode(rle)


def mask_region(shape: Shape, size: tuple[int, int]) -> dict[str, Any]:
    """A `polygonlabels` region (points in percent) or a `brushlabels` one (Label Studio's RLE of
    the RGBA picture, written by label-studio-sdk's brush encoder)."""
    from label_studio_sdk.converter.brush import mask2rle

    width, height = size
    region: dict[str, Any] = {
        "from_name": "label" if shape.polygon is not None else "brush",
        "to_name": "image",
        "original_width": width,
        "original_height": height,
        "image_rotation": 0,
    }
    if shape.polygon is not None:
        xs, ys = shape.polygon[0::2], shape.polygon[1::2]
        points = [[100.0 * x / width, 100.0 * y / height] for x, y in zip(xs, ys, strict=True)]
        region.update(
            type="polygonlabels", value={"points": points, "closed": True, "polygonlabels": [shape.label]}
        )
    else:
        assert shape.mask is not None
        rle = mask2rle(bitmap(shape.mask) * 255)
        region.update(type="brushlabels", value={"format": "rle", "rle": rle, "brushlabels": [shape.label]})
    if shape.score is not None:
        region["score"] = shape.score
    return region


def coco_rle(segmentation: Any, height: int, width: int) -> dict[str, Any]:
    """A COCO `segmentation` (polygons, RLE with counts as a list or a string) as one compressed
    RLE, as pycocotools' `annToRLE` makes it."""
    from pycocotools import mask as coco_mask

    if isinstance(segmentation, dict) and isinstance(segmentation["counts"], str):
        return segmentation
    parts = coco_mask.frPyObjects(segmentation, height, width)
    rle: dict[str, Any] = coco_mask.merge(parts) if isinstance(parts, list) else parts
    return rle


def coco_masks(gt: dict[str, Any], results: list[dict[str, Any]] | None = None) -> list[ToolImage]:
    """A COCO GT file's objects as shapes (crowd regions left out), or a results list's masks
    when `results` is given: an object of one polygon is that polygon, any other (several
    parts, RLE) the mask pycocotools makes of it, as a tool keeps an object of several parts."""
    names = {c["id"]: c["name"] for c in gt["categories"]}
    sizes = {i["id"]: (i["height"], i["width"]) for i in gt["images"]}
    entries = results if results is not None else [a for a in gt["annotations"] if not a.get("iscrowd")]
    by_image: dict[int, list[Shape]] = defaultdict(list)
    for entry in entries:
        segmentation, label = entry["segmentation"], names[entry["category_id"]]
        if isinstance(segmentation, list) and len(segmentation) == 1:
            shape = Shape(label, polygon=tuple(segmentation[0]), score=entry.get("score"))
        else:
            shape = Shape(
                label, mask=coco_rle(segmentation, *sizes[entry["image_id"]]), score=entry.get("score")
            )
        by_image[entry["image_id"]].append(shape)
    return [ToolImage(i["file_name"], i["width"], i["height"], by_image[i["id"]]) for i in gt["images"]]


def edge_polygon(rle: dict[str, Any]) -> tuple[float, ...]:
    """A mask as one polygon in pixels that pycocotools draws back into exactly that mask: the
    pixels' edges between the mask and the rest, walked loop by loop, the loops joined one after
    the other from start to start, then the way back along those starts (pycocotools draws by
    crossings, so a way walked there and back adds nothing)."""
    import numpy as np

    pixels = np.pad(bitmap(rle).astype(bool), 1)
    y, x = np.nonzero(pixels[1:, :] != pixels[:-1, :])  # edges along rows
    across = [((a - 1, b), (a, b)) for b, a in zip(y.tolist(), x.tolist(), strict=True)]
    y, x = np.nonzero(pixels[:, 1:] != pixels[:, :-1])  # edges down columns
    down = [((a, b - 1), (a, b)) for b, a in zip(y.tolist(), x.tolist(), strict=True)]
    ends: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    for start, stop in across + down:
        ends[start].append(stop)
        ends[stop].append(start)
    loops: list[list[tuple[int, int]]] = []
    for first in list(ends):
        while ends[first]:
            loop, at = [first], first
            while True:
                nxt = ends[at].pop()
                ends[nxt].remove(at)
                if nxt == first:
                    break
                loop.append(nxt)
                at = nxt
            loops.append([*loop, first])
    back = np.array([loop[0] for loop in loops[-2::-1]], dtype=np.int64).reshape(-1, 2)
    points = np.concatenate([_corners_only(np.array(loop)) for loop in loops] + [back])
    return tuple(points.reshape(-1).astype(float).tolist())


def _corners_only(loop: Any) -> Any:
    """A closed loop of points (the first again last) without the points inside straight runs."""
    import numpy as np

    step = np.diff(loop, axis=0)
    turns = np.flatnonzero((step[1:] != step[:-1]).any(axis=1)) + 1
    return np.concatenate((loop[:1], loop[turns], loop[-1:]))


def write_yolo_seg(folder: Path, images: Sequence[ToolImage], labels: Sequence[str]) -> Path:
    """A YOLO-seg labels folder of `images` (a mask written as `edge_polygon`), with its
    classes.txt; no sizes: they come from the ground truth."""
    index = {name: i for i, name in enumerate(labels)}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "classes.txt").write_text("".join(f"{name}\n" for name in labels))
    for image in images:
        lines = []
        for shape in image.shapes:
            points = shape.polygon if shape.polygon is not None else edge_polygon(shape.mask or {})
            normalised = [v / (image.width if k % 2 == 0 else image.height) for k, v in enumerate(points)]
            score = [] if shape.score is None else [shape.score]
            lines.append(" ".join(map(repr, [index[shape.label], *normalised, *score])))
        (folder / f"{Path(image.name).stem}.txt").write_text("".join(f"{line}\n" for line in lines))
    return folder
