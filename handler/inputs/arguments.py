"""The Python API's front door: its arguments and per-image records checked once, here.

Every public function and metric class calls these before any work: a bad argument is one
TypeError (the wrong kind of value) or ValueError (the right kind, a wrong value) that names the
argument, the record's index and what was expected, never an error from deep inside numpy. A box
the engine cannot score (a coordinate that is not finite, corners swapped, an area past the float
range, a confidence that is not finite or outside [0, 1]) is not an argument error: it is skipped,
counted and listed with its reason, as the readers skip a row of a file.

A record's fields are `RECORD_FIELDS`, one line each: a new column of the records (masks) is one
more `RecordField`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import msgspec
import numpy as np
import numpy.typing as npt

from handler.boxes import BoolArray, FloatArray, MaskRuns, box_area
from handler.datasets.builder import (
    CONFIDENCE_NOT_FINITE,
    CONFIDENCE_OUT_OF_RANGE,
    CONFIDENCE_RANGE,
    bad_box_reasons,
)
from handler.datasets.columns import bad_box_rows
from handler.datasets.segmentation import readable, segmentation_masks
from handler.engine import Thresholds
from handler.engine.masks import from_bitmaps, made
from handler.inputs.node_inputs import select_number

Array = npt.NDArray[Any]
PREDICTIONS: Final = "predictions"
GROUNDTRUTHS: Final = "groundtruths"


# What an array of the wrong kind holds, in words, by numpy's dtype kind.
KIND_WORDS: Final = {
    "U": "strings",
    "S": "bytes",
    "c": "complex numbers",
    "b": "booleans",
    "O": "Python objects",
}


def _kind(value: Any) -> str:
    return "None" if value is None else type(value).__name__


def _described(value: Any) -> str:
    return "None" if value is None else f"{type(value).__name__} {value!r:.80}"


def number(name: str, value: Any) -> float:
    """A real, finite number (an int, a float, a numpy scalar; not a bool)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"Expected {name} to be a number but got {_described(value)}")
    if not math.isfinite(float(value)):
        raise ValueError(f"Expected {name} to be a finite number but got {value!r}")
    return float(value)


def thresholds(iou_min: Any, iou_perfect: Any, confidence_threshold: Any) -> Thresholds:
    """The thresholds of a Python metric, held to node.json's options like the node's inputs."""
    confidence = number("confidence_threshold", confidence_threshold)
    if not 0 <= confidence <= 1:
        raise ValueError(f"Expected `confidence_threshold` in [0, 1] but got {confidence_threshold!r}")
    return Thresholds(
        select_number("IOU_MIN", number("iou_min", iou_min)),
        select_number("IOU_PERFECT", number("iou_perfect", iou_perfect)),
        confidence,
    )


def instance(name: str, value: Any, kind: type | tuple[type, ...], expected: str) -> Any:
    """`value` when it is a `kind` (None allowed when `kind` includes NoneType), else a TypeError."""
    if not isinstance(value, kind):
        raise TypeError(f"Expected {name} to be {expected} but got {_described(value)}")
    return value


def text(name: str, value: Any) -> str:
    """A non-empty string (a dataset reference, a report id)."""
    if not instance(name, value, str, "a string"):
        raise ValueError(f"Expected {name} to be a non-empty string but got ''")
    return str(value)


def optional_text(name: str, value: Any) -> str | None:
    return None if value is None else text(name, value)


def class_names(dataset_meta: Any) -> tuple[dict[str, Any] | None, npt.NDArray[np.str_] | None]:
    """mmeval's `dataset_meta` (a copy) and its `classes`, the names of integer labels 0, 1, ..."""
    if dataset_meta is None:
        return None, None
    meta = dict(instance("dataset_meta", dataset_meta, Mapping, 'a dict like {"classes": [...]}'))
    classes = meta.get("classes")
    if classes is None:
        return meta, None
    if isinstance(classes, str | bytes) or not isinstance(classes, Sequence | np.ndarray):
        raise TypeError(
            f"Expected dataset_meta['classes'] to be a list of class names but got {_kind(classes)}"
        )
    names = np.asarray(list(classes), dtype=object)
    if not all(isinstance(name, str) for name in names.tolist()):
        raise TypeError("Expected dataset_meta['classes'] to be a list of class names (strings)")
    return meta, names.astype(str)


class Skipped(msgspec.Struct, frozen=True):
    """Boxes left out of a batch, by reason: how many, and the first one's place."""

    counts: dict[str, int]
    first: dict[str, str]  # reason -> "predictions[3] box 2"

    def __bool__(self) -> bool:
        return bool(self.counts)

    def __str__(self) -> str:
        return "; ".join(
            f"{self.first[why]}: {why}" + (f" (and {n - 1} more)" if n > 1 else "")
            for why, n in self.counts.items()
        )


class Batch(msgspec.Struct, frozen=True):
    """A batch of records as columns: every box of the groundtruths, then of the predictions.

    `image` is the record's index; `labels` are class names (str) or, without `dataset_meta`,
    integers as given; `keep` says which boxes the engine scores (the rest are in `skipped`)."""

    xyxy: FloatArray
    labels: Array
    scores: FloatArray
    image: npt.NDArray[np.int64]
    n_gt: int
    keep: BoolArray
    skipped: Skipped
    masks: MaskRuns | None = None  # every record of both sides gave `masks`: the boxes' masks


def _array(where: str, value: Any) -> Array:
    try:
        return np.asarray(value)
    except (ValueError, TypeError):  # a ragged list, an object numpy cannot hold
        raise ValueError(f"Expected {where} to be an array but got a ragged {_kind(value)}") from None


def _held(found: Array) -> str:
    return KIND_WORDS.get(found.dtype.kind, f"{found.dtype} values")


def _all_numbers(found: Array) -> bool:
    """An object array of real numbers only (Python's or numpy's; not bools): a slow path, for
    records built of Python objects numpy could not type."""
    return found.dtype.kind == "O" and all(
        isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool)
        for v in found.ravel().tolist()
    )


def _numbers(where: str, value: Any) -> FloatArray:
    """Real numbers as float64 (ints, floats; not bools, strings or complex numbers)."""
    found = _array(where, value)
    if found.size == 0:
        return np.zeros(found.shape)
    if found.dtype.kind not in "iuf" and not _all_numbers(found):
        raise TypeError(f"Expected {where} to hold real numbers but got {_held(found)}")
    with np.errstate(over="ignore"):  # float128 past float64's range: infinity, a per-box skip
        return found.astype(np.float64)


def _boxes(where: str, value: Any, boxes: int | None) -> FloatArray:
    found = _numbers(where, value)
    if found.size == 0:
        return np.empty((0, 4))
    if found.ndim != 2 or found.shape[1] != 4:
        raise ValueError(f"Expected {where} of shape (N, 4) (x1, y1, x2, y2) but got shape {found.shape}")
    return found


def _per_box(where: str, found: Array, boxes: int) -> Array:
    if found.size == 0 and boxes == 0:
        return found.reshape(0)
    if found.shape != (boxes,):
        raise ValueError(f"Expected {where} of shape ({boxes},), one per box, but got shape {found.shape}")
    return found


def _scores(where: str, value: Any, boxes: int | None) -> FloatArray:
    assert boxes is not None  # scores follow the boxes
    return _per_box(where, _numbers(where, value), boxes)


def _labels(where: str, value: Any, boxes: int | None) -> Array:
    """Class names (str) or integers, one kind in one array."""
    assert boxes is not None  # labels follow the boxes
    found = _per_box(where, _array(where, value), boxes)
    if found.size == 0:
        return np.empty(0, dtype=np.int64)
    if found.dtype.kind in "iu":
        return found.astype(np.int64)
    if found.dtype.kind == "U":
        return found
    if found.dtype.kind == "O":
        values = found.tolist()
        if all(isinstance(v, str) for v in values):
            return found.astype(str)
        if all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in values):
            return found.astype(np.int64)
    raise TypeError(
        f"Expected {where} to be class names (strings) or integer ids, one kind, but got {found.dtype}"
    )


class RecordField(msgspec.Struct, frozen=True):
    """One key of a record: which side has it, whether it must, and how it is read and checked."""

    key: str
    sides: tuple[str, ...]
    required: bool
    read: Callable[[str, Any, int | None], Array]  # where, value, the record's box count


def _masks(where: str, value: Any, boxes: int | None) -> Array:
    """mmdetection's instance masks, one per box: (N, height, width) binary bitmaps, or a list of
    COCO RLE dicts (`{"size": [height, width], "counts": …}`, as its results carry them)."""
    assert boxes is not None  # masks follow the boxes
    if isinstance(value, list | tuple) and value and all(isinstance(item, Mapping) for item in value):
        return _rle_dicts(where, value, boxes)
    found = _array(where, value)
    if found.size == 0 and boxes == 0:
        return np.zeros((0, 1, 1), dtype=bool)
    if found.ndim != 3 or len(found) != boxes:
        raise ValueError(
            f"Expected {where} of shape ({boxes}, height, width), one mask per box, "
            f"or a list of {boxes} COCO RLE dicts, but got shape {found.shape}"
        )
    if found.dtype.kind not in "biu":
        raise TypeError(f"Expected {where} to hold a binary mask (booleans or 0/1) but got {_held(found)}")
    return found.astype(bool)


def _rle_dicts(where: str, value: Sequence[Mapping[str, Any]], boxes: int) -> Array:
    """The RLE dicts as an object array, compressed counts as text (pycocotools writes bytes)."""
    if len(value) != boxes:
        raise ValueError(f"Expected {where} to hold {boxes} masks, one per box, but got {len(value)}")
    found = np.empty(len(value), dtype=object)
    found[:] = [
        {**item, "counts": item["counts"].decode("ascii", "replace")}
        if isinstance(item.get("counts"), bytes)
        else dict(item)
        for item in value
    ]
    return found


def _runs(where: str, masks: Array) -> MaskRuns:
    """A record's masks as runs: bitmaps encoded, RLE dicts decoded (an unreadable one is a
    ValueError naming it)."""
    if masks.dtype != object:
        return from_bitmaps(masks)
    unknown = np.full(len(masks), -1, dtype=np.int64)
    read = segmentation_masks(
        list(masks), unknown, np.empty(0), np.empty(0), np.zeros(len(masks), dtype=bool)
    )
    if read.rejected:
        index, reason = min(read.rejected.items())
        raise ValueError(f"Expected {where}[{index}] to be a COCO RLE mask but got: {reason}")
    return MaskRuns.none(len(masks)) if read.masks is None else made(readable(read.masks))


RECORD_FIELDS: Final = (
    RecordField("bboxes", (GROUNDTRUTHS, PREDICTIONS), True, _boxes),
    RecordField("labels", (GROUNDTRUTHS, PREDICTIONS), True, _labels),
    RecordField("scores", (PREDICTIONS,), False, _scores),
    RecordField("masks", (GROUNDTRUTHS, PREDICTIONS), False, _masks),
)


def _batch_masks(columns: list[dict[str, Array]], places: list[str]) -> MaskRuns | None:
    """Every record's masks as runs, when every record of both sides gives them (then pairs are
    measured by mask IoU, as `pair_datasets` does for files); else None."""
    if not columns or not all("masks" in c for c in columns):
        return None
    return MaskRuns.concatenate(
        [_runs(f"{place}['masks']", c["masks"]) for c, place in zip(columns, places, strict=True)]
    )


def _records(name: str, value: Any) -> Sequence[Mapping[str, Any]]:
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence | np.ndarray):
        raise TypeError(f"Expected {name} to be a list of per-image dicts but got {_kind(value)}")
    for index, record in enumerate(value):
        where = f"{name}[{index}]"
        instance(where, record, Mapping, 'a dict like {"bboxes": ..., "labels": ...}')
        for spec in RECORD_FIELDS:
            if spec.required and name in spec.sides and spec.key not in record:
                keys = ", ".join(repr(key) for key in record) or "none"
                raise ValueError(f"Expected {where} to have the key {spec.key!r} but it has {keys}")
    return list(value)


def _record_columns(name: str, index: int, record: Mapping[str, Any]) -> dict[str, Array]:
    """One record's fields, each checked against the record's box count."""
    columns: dict[str, Array] = {}
    for spec in RECORD_FIELDS:
        if name in spec.sides and spec.key in record:
            boxes = len(columns["bboxes"]) if "bboxes" in columns else None
            columns[spec.key] = spec.read(f"{name}[{index}][{spec.key!r}]", record[spec.key], boxes)
    return columns


def _named(labels: Array, classes: npt.NDArray[np.str_] | None, where: str) -> Array:
    """Integer labels as their class names when `dataset_meta` names them; else as given."""
    if classes is None or labels.dtype.kind != "i":
        return labels
    outside = (labels < 0) | (labels >= len(classes))
    if outside.any():
        raise ValueError(
            f"Expected {where} in [0, {len(classes)}) (dataset_meta['classes'] names {len(classes)}) "
            f"but got {labels[outside][0]}"
        )
    names: Array = classes[labels]
    return names


def _one_label_kind(labels: list[Array], places: list[str]) -> None:
    """Names and integers never meet: they would compare unequal however they were meant."""
    kinds = [
        (column.dtype.kind == "U", where) for column, where in zip(labels, places, strict=True) if len(column)
    ]
    mixed = next((where for is_name, where in kinds if is_name != kinds[0][0]), None)
    if mixed is not None:
        first, named = kinds[0][1], "class names" if kinds[0][0] else "integers"
        raise TypeError(
            f"Expected {mixed} to be {named} like {first}: integer labels meet class names only "
            f"through dataset_meta={{'classes': [...]}}"
        )


def _box_verdicts(xyxy: FloatArray, scores: FloatArray, is_pred: BoolArray) -> npt.NDArray[np.str_]:
    """Each box's reason to be skipped ("" to keep it): the readers' rules and reasons, in their
    order, and an area past the float range (two areas add up in an IoU's union)."""
    with np.errstate(over="ignore", invalid="ignore"):
        beyond = ~np.isfinite(box_area(xyxy) * 2)
        outside = (scores < CONFIDENCE_RANGE[0]) | (scores > CONFIDENCE_RANGE[1])
    bad = bad_box_rows(xyxy)
    verdict = np.where(bad, bad_box_reasons(xyxy, sized=False), "").astype(object)
    rules = (
        (~bad & beyond, "box area past the float range"),
        (is_pred & ~np.isfinite(scores), CONFIDENCE_NOT_FINITE),
        (is_pred & outside, CONFIDENCE_OUT_OF_RANGE),
    )
    for broken, reason in rules:  # a box keeps the first reason it gets
        verdict[broken & (verdict == "")] = reason
    return verdict.astype(str)


def _skipped(
    verdict: npt.NDArray[np.str_], places: list[str], box_of: npt.NDArray[np.int64], record: Array
) -> Skipped:
    """The skipped boxes by reason (a pass per reason, not per box)."""
    counts, first = {}, {}
    for reason in dict.fromkeys(verdict[verdict != ""].tolist()):
        rows = np.flatnonzero(verdict == reason)
        counts[reason] = len(rows)
        first[reason] = f"{places[int(record[rows[0]])]} box {int(box_of[rows[0]])}"
    return Skipped(counts, first)


def records(predictions: Any, groundtruths: Any, classes: npt.NDArray[np.str_] | None = None) -> Batch:
    """A batch of `add`'s per-image records, checked and laid out as columns (image = index)."""
    sides = (
        (GROUNDTRUTHS, _records(GROUNDTRUTHS, groundtruths)),
        (PREDICTIONS, _records(PREDICTIONS, predictions)),
    )
    if len(sides[0][1]) != len(sides[1][1]):
        raise ValueError(
            f"Expected as many prediction records as groundtruth records but got "
            f"{len(sides[1][1])} and {len(sides[0][1])}"
        )
    columns = [_record_columns(name, i, record) for name, found in sides for i, record in enumerate(found)]
    places = [f"{name}[{i}]" for name, found in sides for i in range(len(found))]
    labels = [_named(c["labels"], classes, f"{p}['labels']") for c, p in zip(columns, places, strict=True)]
    _one_label_kind(labels, [f"{p}['labels']" for p in places])
    sizes = np.asarray([len(c["bboxes"]) for c in columns], dtype=np.int64)
    n_records, n_gt = len(sides[0][1]), int(sizes[: len(sides[0][1])].sum())
    record = np.repeat(np.arange(len(columns)), sizes)
    xyxy = np.concatenate([c["bboxes"] for c in columns] or [np.empty((0, 4))])
    scores = np.concatenate([c.get("scores", np.ones(len(c["bboxes"]))) for c in columns] or [np.empty(0)])
    verdict = _box_verdicts(xyxy, scores, np.arange(len(xyxy)) >= n_gt)
    box_of = np.arange(len(xyxy)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return Batch(
        xyxy=xyxy,
        labels=np.concatenate([column for column in labels if len(column)] or [np.empty(0, dtype=np.int64)]),
        scores=scores,
        image=(record % max(n_records, 1)).astype(np.int64),
        n_gt=n_gt,
        keep=verdict == "",
        skipped=_skipped(verdict, places, box_of, record),
        masks=_batch_masks(columns, places),
    )
