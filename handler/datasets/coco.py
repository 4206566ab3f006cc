"""COCO: an instances file (GT, or predictions with `score`), or a results list paired with GT.

Assets are named by `file_name` (by `id` when an image has none); classes by category name.
COCO ids are kept in `CocoIds` so that a results list can be joined to its GT file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from handler.boxes import BoolArray, BoxTable, Dataset, FloatArray, IntArray
from handler.datasets.columns import bad_box_rows, float_column, number_or_nan
from handler.datasets.skips import SkipLog
from handler.errors import DatasetError


@dataclass(frozen=True)
class CocoIds:
    """COCO's own ids, aligned with a dataset's `asset_ids` and `class_names`."""

    image_ids: list[str]
    category_ids: list[str]


def is_coco_instances(document: Any) -> bool:
    return isinstance(document, dict) and "images" in document and "annotations" in document


def is_coco_results(document: Any) -> bool:
    return (
        isinstance(document, list)
        and bool(document)
        and isinstance(document[0], dict)
        and "image_id" in document[0]
        and "bbox" in document[0]
    )


def _list_field(source: str, document: dict[str, Any], key: str) -> list[Any]:
    value = document.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise DatasetError(f"{source}: `{key}`: expected a list of objects")
    return value


def _lookup(keys: list[str], index: dict[str, int]) -> IntArray:
    return np.array([index.get(k, -1) for k in keys], dtype=np.int64)


def _four_numbers(value: Any) -> list[float]:
    if isinstance(value, list) and len(value) == 4:
        return [number_or_nan(v) for v in value]
    return [math.nan] * 4


def _bbox_problem(value: Any) -> str:
    numbers = _four_numbers(value)
    if not all(math.isfinite(v) for v in numbers):
        return f"bbox {value!r}: expected [x, y, width, height], 4 finite numbers"
    return f"bbox {value!r}: expected a width and height of at least 0"


def _xywh_to_xyxy(annotations: list[dict[str, Any]], skips: SkipLog) -> tuple[FloatArray, BoolArray]:
    """(N, 4) xyxy boxes and a mask of the rows that are real boxes."""
    bbox = [a.get("bbox") for a in annotations]
    try:
        xywh = np.array(bbox, dtype=np.float64).reshape(len(bbox), 4)
    except (TypeError, ValueError):  # the slow path only for a file with a bad bbox
        xywh = np.array([_four_numbers(b) for b in bbox], dtype=np.float64).reshape(len(bbox), 4)
    xyxy = np.concatenate([xywh[:, :2], xywh[:, :2] + xywh[:, 2:]], axis=1)
    bad = bad_box_rows(xyxy)
    for row in np.flatnonzero(bad):
        skips.add(f"annotations[{row}]", _bbox_problem(bbox[row]))
    return xyxy, ~bad


def _boxes(
    source: str,
    annotations: list[dict[str, Any]],
    ids: CocoIds,
    skips: SkipLog,
) -> tuple[BoxTable, int]:
    """The box table of COCO annotations against known images and categories; crowd count."""
    image = _lookup(
        [str(a.get("image_id")) for a in annotations], {k: i for i, k in enumerate(ids.image_ids)}
    )
    class_id = _lookup(
        [str(a.get("category_id")) for a in annotations], {k: i for i, k in enumerate(ids.category_ids)}
    )
    xyxy, good = _xywh_to_xyxy(annotations, skips)
    confidence = float_column([a.get("score", 1.0) for a in annotations])
    crowd = np.array([a.get("iscrowd", 0) == 1 for a in annotations], dtype=bool)
    for row in np.flatnonzero(good & (image < 0)):
        skips.add(
            f"annotations[{row}]", f"image_id {annotations[row].get('image_id')!r} is not in the images"
        )
    for row in np.flatnonzero(good & (image >= 0) & (class_id < 0)):
        skips.add(
            f"annotations[{row}]",
            f"category_id {annotations[row].get('category_id')!r} is not in the categories",
        )
    for row in np.flatnonzero(good & (image >= 0) & (class_id >= 0) & np.isnan(confidence)):
        skips.add(f"annotations[{row}]", "score is not a number")
    good &= (image >= 0) & (class_id >= 0) & ~np.isnan(confidence)
    keep = good & ~crowd
    table = BoxTable.build(
        xyxy=xyxy[keep],
        class_id=class_id[keep],
        image=image[keep],
        confidence=confidence[keep],
        source_index=np.flatnonzero(keep),
    )
    return table, int(np.count_nonzero(good & crowd))


def _images_and_categories(
    source: str, document: dict[str, Any]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    images = _list_field(source, document, "images")
    categories = _list_field(source, document, "categories")
    for position, image in enumerate(images):
        if "id" not in image:
            raise DatasetError(f"{source}: images[{position}]: expected an `id`")
    for position, category in enumerate(categories):
        if "id" not in category or not isinstance(category.get("name"), str):
            raise DatasetError(f"{source}: categories[{position}]: expected an `id` and a `name`")
    return images, categories


def read_coco_instances(source: str, document: dict[str, Any], format_name: str) -> tuple[Dataset, CocoIds]:
    images, categories = _images_and_categories(source, document)
    annotations = _list_field(source, document, "annotations")
    ids = CocoIds([str(i["id"]) for i in images], [str(c["id"]) for c in categories])
    skips = SkipLog(source)
    boxes, crowd = _boxes(source, annotations, ids, skips)
    dataset = Dataset(
        source=source,
        format=format_name,
        asset_ids=[str(i.get("file_name") or i["id"]) for i in images],
        class_names=[c["name"] for c in categories],
        boxes=boxes,
        widths=_sizes(images, "width"),
        heights=_sizes(images, "height"),
        skipped=skips.listed,
        skipped_count=skips.count,
        crowd_excluded=crowd,
    )
    return dataset, ids


def _sizes(images: list[dict[str, Any]], key: str) -> Any:
    sizes = float_column([i.get(key) for i in images])
    sizes[~(sizes > 0)] = np.nan  # 0 means unknown in some exports
    return sizes


def read_coco_results(
    source: str, document: list[Any], format_name: str, reference: Dataset | None, ids: CocoIds | None
) -> Dataset:
    """A results list covers every image of the COCO GT file it is paired with (SPEC §4)."""
    if reference is None or ids is None:
        raise DatasetError(
            f"{source}: a COCO results list names images and categories by COCO id: "
            "expected a COCO instances file as the ground truth"
        )
    if not all(isinstance(entry, dict) for entry in document):
        raise DatasetError(f"{source}: expected a list of objects with image_id, category_id, bbox, score")
    skips = SkipLog(source)
    boxes, _ = _boxes(source, document, ids, skips)
    return Dataset(
        source=source,
        format=format_name,
        asset_ids=reference.asset_ids,
        class_names=reference.class_names,
        boxes=boxes,
        widths=reference.widths,
        heights=reference.heights,
        skipped=skips.listed,
        skipped_count=skips.count,
    )
