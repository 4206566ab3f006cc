"""Label Studio: a JSON export (tasks with `annotations` and `predictions`) and a JSON-MIN export.

Label Studio's own converter (label_studio_sdk/converter) is the spec: a box is a
`rectanglelabels` region whose `value` holds `x`, `y`, `width`, `height` in percent of the
region's `original_width` / `original_height` and its class in `rectanglelabels[0]`; its
`rotation` is degrees clockwise about its top-left corner (`x`, `y`), as the editor turns it,
in pixels (a rotated box). A `polygonlabels` region's `points` are `[x, y]` pairs in percent of
the image, drawn as pycocotools draws a COCO polygon; a `brushlabels` region's `rle` is Label
Studio's run-length code of an RGBA picture of the image, row by row, its mask the pixels whose
alpha is not 0 (`region_masks`); each is one object, its box the mask's extent, and needs its
image's size. A rectangle and the run of polygons of its label that make it up are one object
(`box_parts`: label-studio-sdk's COCO import writes a COCO object so, its bbox then its parts).
Regions of other shapes (ellipses, keypoints) are skipped with theirs; regions
that are not objects (choices, text areas, ratings) are not boxes at all. Nothing depends on
the labeling config's control names (`from_name`, `to_name`).

Which boxes a task gives:
- as the ground truth, its newest submitted annotation (`created_at`, then `id`), cancelled
  ones (`was_cancelled`) left out;
- as the predictions (the same export may be both sides), its prediction of the chosen model
  version (`--pred-model-version`; one version in the file needs no choice), the newest if the
  model predicted the task twice; `score` on a region, else on the prediction, is the
  confidence. An export that lists predictions by id only (the community edition's quick export)
  gives instead the prediction each annotation was made from (`annotation.prediction`).

A task's asset is its image's file name, whatever form `data.image` takes: an upload path
(`/data/upload/3/8f1e2a3b-a.jpg`, the 8-hex prefix that Label Studio adds removed), a URL, a
cloud URI (`s3://bucket/a.jpg`) or a local-files link (`/data/local-files/?d=images/a.jpg`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import parse_qs, unquote, urlsplit

import msgspec
import numpy as np

from handler.boxes import Images, ParsedRows
from handler.datasets.assetnames import IMAGE_EXTENSIONS
from handler.datasets.box_parts import objects_of
from handler.datasets.builder import build_dataset
from handler.datasets.columns import float_column, number_or_nan
from handler.datasets.format import Format
from handler.datasets.jsondoc import json_type
from handler.datasets.labels import ClassSpace
from handler.datasets.loaded import Loaded
from handler.datasets.read_options import ReadOptions, option_label
from handler.datasets.region_masks import (
    MaskDecodeError,
    RegionMasks,
    image_size,
    label_studio_brush,
    polygon_points,
)
from handler.engine.rotated import corners
from handler.errors import DatasetError, InputError, quoted

BOX_TYPE: Final = "rectanglelabels"
POLYGON_TYPE: Final = "polygonlabels"
BRUSH_TYPE: Final = "brushlabels"
# Object regions read as masks, by type (a type without labels is the same shape, unlabelled).
MASK_SHAPES: Final = {
    POLYGON_TYPE: POLYGON_TYPE,
    "polygon": POLYGON_TYPE,
    BRUSH_TYPE: BRUSH_TYPE,
    "brush": BRUSH_TYPE,
}
# Object regions that are neither: skipped and counted, each with its own reason.
OTHER_SHAPES: Final = {
    "ellipselabels": "ellipse",
    "ellipse": "ellipse",
    "keypointlabels": "keypoint",
    "keypoint": "keypoint",
}
# Where a region's class is written, by the shape's labels key.
_LABEL_KEYS: Final = (BOX_TYPE, POLYGON_TYPE, BRUSH_TYPE)
# Percent of the image.
_PERCENT: Final = 100.0
# The random prefix Label Studio gives an uploaded file: `8f1e2a3b-a.jpg` is `a.jpg`.
_UPLOAD_PREFIX: Final = re.compile(r"^[0-9a-f]{8}-")
_UPLOAD_PATH: Final = "/data/upload/"
# A JSON-MIN record's own keys, beside the task's data and its regions.
_MIN_KEYS: Final = ("annotator", "annotation_id")
# A task's keys that hold lists (of annotations, predictions, regions).
_LISTS: Final = ("annotations", "completions", "predictions")
# Records looked at to recognise an export, at most.
_PROBE: Final = 20


def image_name(reference: str) -> str:
    """The image's file name in any form a task's `data.image` takes (see the module's top)."""
    try:
        parts = urlsplit(reference)
    except ValueError:  # not a URL (an unclosed `[` of an IPv6 host): the text is the path
        parts = urlsplit(reference.replace("[", "%5B").replace("]", "%5D"))
    path = unquote(parts.path)
    if "/data/local-files" in path and "d" in parse_qs(parts.query):
        path = parse_qs(parts.query)["d"][0]
    name = path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] or reference
    return _UPLOAD_PREFIX.sub("", name) if path.startswith(_UPLOAD_PATH) else name


def _image_reference(data: dict[str, Any]) -> str | None:
    """The task's image: the first data value naming an image file, else `image`, else the first text."""
    texts = [value for value in data.values() if isinstance(value, str) and value]
    named = next((t for t in texts if image_name(t).lower().endswith(tuple(IMAGE_EXTENSIONS))), None)
    image = data.get("image")
    return named or (image if isinstance(image, str) and image else None) or next(iter(texts), None)


def _is_task(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("data"), dict)
        and ("annotations" in value or "predictions" in value or "completions" in value)
    )


def is_label_studio(document: Any) -> bool:
    return isinstance(document, list) and bool(document) and _is_task(document[0])


def _carries_boxes(record: Any) -> bool:
    return isinstance(record, dict) and any(
        isinstance(value, list)
        and any(isinstance(v, dict) and any(k in v for k in _LABEL_KEYS) for v in value)
        for value in record.values()
    )


def is_label_studio_min(document: Any) -> bool:
    if not isinstance(document, list) or not document or not isinstance(document[0], dict):
        return False
    first = document[0]
    return all(key in first for key in _MIN_KEYS) or any(map(_carries_boxes, document[:_PROBE]))


class _Regions(msgspec.Struct):
    """The regions read, one entry per region that is an object; columns are built from them."""

    task: list[int]
    position: list[str]
    region: list[dict[str, Any]]
    score: list[Any]  # the region's confidence as written (None: none)

    def add(self, task: int, prefix: str, regions: list[Any], default_score: Any) -> None:
        for number, region in enumerate(regions):
            if isinstance(region, dict) and _region_type(region) is not None:
                self.task.append(task)
                self.position.append(f"{prefix}[{number}]")
                self.region.append(region)
                self.score.append(region.get("score", default_score))


def _region_type(region: dict[str, Any]) -> str | None:
    """`rectanglelabels` or another object shape; None for a region that is not an object."""
    kind = region.get("type")
    if kind is None:  # JSON-MIN writes no type: its labels key says it
        kind = next((key for key in (*_LABEL_KEYS, *OTHER_SHAPES) if key in _value(region)), None)
    if not isinstance(kind, str):  # a list or a number where the type's name belongs: no object
        return None
    known = kind in (BOX_TYPE, "rectangle") or kind in MASK_SHAPES or kind in OTHER_SHAPES
    return kind if known else None


def _value(region: dict[str, Any]) -> dict[str, Any]:
    value = region.get("value")
    return value if isinstance(value, dict) else region  # JSON-MIN writes the value itself


def _size(region: dict[str, Any], key: str) -> float:
    size = number_or_nan(region.get(key))
    return size if size > 0 else math.nan


def _stamp(item: dict[str, Any]) -> tuple[str, float]:
    """Newest first by `created_at` (ISO 8601 text sorts in time order), then by id."""
    created = item.get("created_at")
    number = item.get("id")
    return (created if isinstance(created, str) else "", float(number) if type(number) is int else -1.0)


def _newest(items: list[dict[str, Any]]) -> dict[str, Any] | None:
    return max(items, key=_stamp, default=None)


def _submitted(task: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    annotations = task.get("annotations", task.get("completions")) or []
    return [
        (number, a)
        for number, a in enumerate(annotations)
        if isinstance(a, dict) and not a.get("was_cancelled") and not a.get("skipped")
    ]


def _ground_truth(where: str, tasks: list[dict[str, Any]]) -> _Regions:
    regions = _Regions([], [], [], [])
    for index, task in enumerate(tasks):
        chosen = _newest([a for _, a in _submitted(task)])
        if chosen is not None:
            number = next(n for n, a in _submitted(task) if a is chosen)
            key = "annotations" if "annotations" in task else "completions"
            regions.add(index, f"{where}: tasks[{index}].{key}[{number}].result", _result(chosen), None)
    return regions


def _result(item: dict[str, Any]) -> list[Any]:
    result = item.get("result")
    return result if isinstance(result, list) else []


def _full_predictions(task: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The task's predictions written in full, with where; else those its annotations were made from."""
    listed = task.get("predictions") or []
    full = [(f"predictions[{n}]", p) for n, p in enumerate(listed) if isinstance(p, dict)]
    if full or not listed:
        return full
    return [
        (f"annotations[{n}].prediction", a["prediction"])
        for n, a in _submitted(task)
        if isinstance(a.get("prediction"), dict) and a["prediction"].get("result")
    ]


def _model_version(prediction: dict[str, Any]) -> str:
    version = prediction.get("model_version")
    return "" if version is None else str(version)


def _listed_by_id(task: dict[str, Any]) -> bool:
    return any(type(p) is int for p in task.get("predictions") or [])


def _chosen_version(where: str, tasks: list[dict[str, Any]], wanted: str | None) -> str | None:
    versions = Counter(_model_version(p) for task in tasks for _, p in _full_predictions(task))
    if not versions and any(map(_listed_by_id, tasks)):
        raise DatasetError(
            f"{where}: the predictions are listed by id only (as Project → Export → JSON writes them) "
            "and no annotation holds the prediction it was made from: export a snapshot with full "
            "predictions (the export API with serialization_options.predictions.only_id false)"
        )
    listing = ", ".join(f"{quoted(v)} ({n} tasks)" for v, n in sorted(versions.items()))
    if wanted is not None and wanted not in versions:
        raise DatasetError(
            f"{where}: no prediction of model version {quoted(wanted)}; the export holds {listing or 'none'}"
        )
    if wanted is None and len(versions) > 1:
        raise DatasetError(
            f"{where}: predictions of {len(versions)} model versions: {listing}; "
            "choose one with --pred-model-version"
        )
    return wanted if wanted is not None else next(iter(versions), None)


def _predictions(where: str, tasks: list[dict[str, Any]], wanted: str | None) -> _Regions:
    version = _chosen_version(where, tasks, wanted)
    regions = _Regions([], [], [], [])
    for index, task in enumerate(tasks):
        of_version = [(at, p) for at, p in _full_predictions(task) if _model_version(p) == version]
        chosen = _newest([p for _, p in of_version])
        if chosen is not None:
            at = next(at for at, p in of_version if p is chosen)
            regions.add(index, f"{where}: tasks[{index}].{at}.result", _result(chosen), chosen.get("score"))
    return regions


def _min_records(where: str, records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], _Regions]:
    """JSON-MIN: a record per annotation (several for a task annotated twice: the newest counts)."""
    newest: dict[Any, int] = {}
    for number, record in enumerate(records):
        task = record.get("id", f"record {number}")
        best = newest.get(task)
        if best is None or _stamp(record) > _stamp(records[best]):
            newest[task] = number
    kept = sorted(newest.values())
    regions = _Regions([], [], [], [])
    for index, number in enumerate(kept):
        for key, value in records[number].items():
            if isinstance(value, list):
                regions.add(index, f"{where}: [{number}].{key}", value, None)
    return [{"data": records[n]} for n in kept], regions


def _check_tasks(where: str, document: list[Any], what: Callable[[Any], bool], expected: str) -> None:
    """Every record is a task, and each of its lists is a list: a wrong type is one line naming it."""
    for index, task in enumerate(document):
        if not what(task):
            raise DatasetError(f"{where}: [{index}]: expected {expected}")
        for key in _LISTS:
            value = task.get(key) if isinstance(task, dict) else None
            if value is not None and not isinstance(value, list):
                raise DatasetError(
                    f"{where}: tasks[{index}].{key}: expected a list, got a JSON {json_type(value)}"
                )


class _Columns(msgspec.Struct, frozen=True):
    """The regions as columns: pixel boxes where the region gave its image size, else 0-1."""

    xyxy: Any
    normalized: Any
    widths: Any
    heights: Any
    angle: Any  # None: no region is turned

    def rows(self, chosen: Any) -> _Columns:
        """The columns of the `chosen` rows (a boolean mask)."""
        angle = None if self.angle is None else self.angle[chosen]
        return _Columns(
            self.xyxy[chosen], self.normalized[chosen], self.widths[chosen], self.heights[chosen], angle
        )


def _columns(regions: _Regions) -> _Columns:
    values = [_value(r) for r in regions.region]
    xywh = np.array(
        [[number_or_nan(v.get(key)) for key in ("x", "y", "width", "height")] for v in values],
        dtype=np.float64,
    ).reshape(len(values), 4)
    widths = np.array([_size(r, "original_width") for r in regions.region], dtype=np.float64)
    heights = np.array([_size(r, "original_height") for r in regions.region], dtype=np.float64)
    normalized = ~(np.isfinite(widths) & np.isfinite(heights))
    # percent of the image: pixels where the region gave its image's size, else the 0-1 frame
    scale = np.stack([np.where(normalized, 1.0, widths), np.where(normalized, 1.0, heights)], axis=1) / 100.0
    corner, size = xywh[:, :2] * scale, xywh[:, 2:] * scale
    rotation = float_column([v.get("rotation", 0) for v in values])  # not a number: the builder skips it
    if not rotation.any():
        return _Columns(np.concatenate([corner, corner + size], axis=1), normalized, widths, heights, None)
    # The editor turns the box about its top-left corner; the box model, about its centre: the
    # corner is the centre plus the turned top-left of a box about the origin.
    half = size / 2
    centre = corner - corners(np.concatenate([-half, half], axis=1), np.nan_to_num(rotation))[:, 0]
    return _Columns(
        np.concatenate([centre - half, centre + half], axis=1), normalized, widths, heights, rotation
    )


def _task_sizes(regions: _Regions, columns: _Columns, tasks: int) -> tuple[Any, Any]:
    """Each task's image size: the first of its regions that wrote one (NaN: none did)."""
    widths, heights = np.full(tasks, np.nan), np.full(tasks, np.nan)
    task = np.array(regions.task, dtype=np.int64)
    sized = np.flatnonzero(~columns.normalized)[::-1]  # the first region of a task is written last
    widths[task[sized]] = columns.widths[sized]
    heights[task[sized]] = columns.heights[sized]
    return widths, heights


def _why_not(region: dict[str, Any]) -> tuple[str, str] | None:
    """(why, reason in a few words) a region is not read as a box, or None when it is one."""
    kind = _region_type(region)
    if kind in OTHER_SHAPES:
        shape = OTHER_SHAPES[kind]
        return f"a {shape} region, not a box", f"{shape}, not a box"
    return None


def _label(region: dict[str, Any]) -> str:
    value = _value(region)
    labels = next((value[key] for key in _LABEL_KEYS if key in value), None)
    first = labels[0] if isinstance(labels, list) and labels else None
    return first if isinstance(first, str) else ""


def _region_masks(regions: _Regions, columns: _Columns) -> tuple[RegionMasks, dict[int, str]]:
    """The polygons and brush masks of the regions, and why those that cannot be read are not."""
    masks, problems = RegionMasks(), {}
    for row, region in enumerate(regions.region):
        shape = MASK_SHAPES.get(str(_region_type(region)))
        if shape is None:
            continue
        width, height = columns.widths[row], columns.heights[row]
        value = _value(region)
        try:
            wide, high = image_size(width, height)  # original_width, original_height
            if shape == POLYGON_TYPE:
                scale = (width / _PERCENT, height / _PERCENT)
                masks.add_polygon(row, polygon_points(value.get("points"), scale))
            else:
                masks.add_pixels(row, label_studio_brush(value.get("rle"), high, wide))
        except MaskDecodeError as error:
            problems[row] = f"a {shape} region: {error}"
    return masks, problems


def _asset_ids(where: str, tasks: list[dict[str, Any]]) -> list[str]:
    names: list[str] = []
    first: dict[str, int] = {}
    for index, task in enumerate(tasks):
        reference = _image_reference(task["data"])
        name = image_name(reference) if reference else str(task.get("id", index))
        if first.setdefault(name, index) != index:
            raise DatasetError(
                f"{where}: tasks[{first[name]}] and tasks[{index}] are the same image {quoted(name)}: "
                "expected one task per image"
            )
        names.append(name)
    return names


class _Read(msgspec.Struct, frozen=True):
    """The regions that are objects, their columns, masks, classes, and why some cannot be read."""

    regions: _Regions
    columns: _Columns
    shapes: RegionMasks
    unreadable: dict[int, str]
    class_id: Any


def _one_object_each(read: _Read) -> _Read:
    """A rectangle and the polygons of its label it is the box of, one object (`box_parts`):
    the rectangle left out, the polygons one row's parts."""
    regions, columns, shapes, class_id = read.regions, read.columns, read.shapes, read.class_id
    n = len(regions.region)
    is_box = np.array([_region_type(r) in (BOX_TYPE, "rectangle") for r in regions.region], dtype=bool)
    is_box &= ~columns.normalized & (np.nan_to_num(columns.angle) == 0 if columns.angle is not None else True)
    is_part = np.zeros(n, dtype=bool)
    is_part[shapes.polygon_rows] = True
    xyxy = np.where(is_box[:, None], columns.xyxy, shapes.polygon_bounds(n))
    group = np.array(regions.task, dtype=np.int64) * (int(class_id.max(initial=0)) + 1) + class_id
    owner = objects_of(np.where(class_id >= 0, group, -1), is_box, is_part, xyxy)
    keep = owner == np.arange(n)
    if keep.all():
        return read
    new_index = np.cumsum(keep) - 1
    kept = np.flatnonzero(keep).tolist()
    chosen = _Regions(
        *(
            [column[row] for row in kept]
            for column in (regions.task, regions.position, regions.region, regions.score)
        )
    )
    return _Read(
        chosen,
        columns.rows(keep),
        shapes.moved(new_index[np.maximum(owner, 0)]),
        {int(new_index[row]): why for row, why in read.unreadable.items()},  # never a part: kept
        class_id[keep],
    )


def _dataset(where: str, format_name: str, tasks: list[dict[str, Any]], regions: _Regions) -> Loaded:
    classes = ClassSpace(None, "", ids_only=False)
    labels = [_label(region) for region in regions.region]
    class_id = np.array([classes.index(label) if label else -1 for label in labels], dtype=np.int64)
    columns = _columns(regions)
    read = _one_object_each(_Read(regions, columns, *_region_masks(regions, columns), class_id))
    problems = [_why_not(region) for region in read.regions.region]
    problems = [
        (read.unreadable[row], "unreadable mask") if row in read.unreadable else p
        for row, p in enumerate(problems)
    ]
    heights, widths = (np.nan_to_num(sizes) for sizes in (read.columns.heights, read.columns.widths))
    masks = read.shapes.runs(len(problems), heights, widths)
    scores = read.regions.score
    positions = read.regions.position
    rows = ParsedRows(
        xyxy=read.shapes.boxes(masks, read.columns.xyxy),
        class_id=read.class_id,
        image=np.array(read.regions.task, dtype=np.int64),
        source_index=np.arange(len(problems)),
        position=lambda row: positions[row],
        confidence=float_column([s if type(s) in (int, float) else math.nan for s in scores]),
        has_confidence=np.array([type(s) in (int, float) for s in scores], dtype=bool),
        normalized=read.columns.normalized,
        rejected={row: p[0] for row, p in enumerate(problems) if p},
        reasons={row: p[1] for row, p in enumerate(problems) if p},
        sized=True,
        convention="x y w h",  # in percent of the image
        angle=read.columns.angle,
        masks=masks,
        wrote=read.shapes.wrote(len(problems)),
    )
    task_widths, task_heights = _task_sizes(regions, columns, len(tasks))
    images = Images(_asset_ids(where, tasks), task_widths, task_heights)
    return Loaded(build_dataset(where, format_name, rows, images, classes.names))


def _read(where: str, document: list[Any], reference: Loaded | None, options: ReadOptions) -> Loaded:
    _check_tasks(where, document, _is_task, "a Label Studio task with `data` and `annotations`")
    if reference is None:
        if options.model_version is not None:
            raise InputError(
                f"{option_label('GT_MODEL_VERSION')}: the ground truth of a Label Studio export is its "
                f"annotations; a model version chooses the predictions ({option_label('PRED_MODEL_VERSION')})"
            )
        return _dataset(where, "label-studio", document, _ground_truth(where, document))
    return _dataset(where, "label-studio", document, _predictions(where, document, options.model_version))


def _read_min(where: str, document: list[Any], reference: Loaded | None, _: ReadOptions) -> Loaded:
    if reference is not None:
        raise DatasetError(
            f"{where}: a Label Studio JSON-MIN export holds annotations only, no predictions: "
            "export the project as JSON to read its predictions"
        )
    _check_tasks(where, document, lambda r: isinstance(r, dict), "a JSON-MIN record (an object)")
    tasks, regions = _min_records(where, document)
    return _dataset(where, "label-studio-min", tasks, regions)


LABEL_STUDIO = Format(
    "label-studio",
    "json",
    is_label_studio,
    lambda where, document, reference: _read(where, document, reference, ReadOptions()),
    read_with=_read,
    takes=frozenset({"model_version"}),
)
LABEL_STUDIO_MIN = Format(
    "label-studio-min",
    "json",
    is_label_studio_min,
    lambda where, document, reference: _read_min(where, document, reference, ReadOptions()),
)
