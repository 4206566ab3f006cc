"""Prediction cache: a JSON list or JSON Lines whose entry i is the model output for asset i of the GT.

Each entry has `predicted_bounding_boxes`: boxes with normalised `x_min/x_max/y_min/y_max`
and a `probabilities` vector, whose argmax is the class (an index into the GT's class list)
and whose max is the confidence (contract §3).
"""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np

from handler.boxes import BoolArray, Dataset, FloatArray, Images, ParsedRows
from handler.datasets.builder import build_dataset
from handler.datasets.columns import float_column
from handler.datasets.format import Format
from handler.datasets.jsondoc import LineRecords
from handler.datasets.loaded import Loaded
from handler.errors import DatasetError

BOXES = "predicted_bounding_boxes"
PROBABILITIES = "probabilities"
CORNERS = ("x_min", "y_min", "x_max", "y_max")


def is_prediction_cache(document: Any) -> bool:
    first = document[0] if isinstance(document, list) and document else None
    return isinstance(first, dict) and (BOXES in first or PROBABILITIES in first)


class CacheBoxes(msgspec.Struct, frozen=True):
    """Every box of the cache, flattened; `entry[k]` is the asset (line) box k belongs to."""

    boxes: list[Any]
    entry: list[int]
    positions: list[str]


def _flatten(source: str, entries: list[Any], positions: list[str]) -> CacheBoxes:
    flat = CacheBoxes([], [], [])
    for index, (entry, position) in enumerate(zip(entries, positions, strict=True)):
        if isinstance(entry, dict) and PROBABILITIES in entry and BOXES not in entry:
            raise DatasetError(
                f"{source}: {position}: an image classification prediction (`{PROBABILITIES}` per image): "
                f"this node evaluates object detection: expected `{BOXES}`"
            )
        boxes = entry.get(BOXES) if isinstance(entry, dict) else None
        if not isinstance(boxes, list):
            raise DatasetError(f"{source}: {position}: expected an object with a `{BOXES}` list")
        flat.boxes.extend(boxes)
        flat.entry.extend([index] * len(boxes))
        flat.positions.extend(f"{position}.{BOXES}[{k}]" for k in range(len(boxes)))
    return flat


def _class_order(reference: Loaded) -> list[str]:
    """The GT's declared class list; else its class names sorted (VOC's own order is alphabetical)."""
    return reference.class_order or sorted(reference.dataset.class_names)


def _probabilities(source: str, flat: CacheBoxes, classes: list[str]) -> tuple[FloatArray, BoolArray]:
    """(N, C) probabilities (NaN where a value is not a number) and the boxes that have a vector."""
    rows = np.full((len(flat.boxes), len(classes)), np.nan)
    listed = np.zeros(len(flat.boxes), dtype=bool)
    for k, box in enumerate(flat.boxes):
        vector = box.get(PROBABILITIES) if isinstance(box, dict) else None
        if not isinstance(vector, list):
            continue
        listed[k] = True
        if len(vector) != len(classes):
            # A misaligned vector would silently pick wrong classes: refuse the file.
            shown = ", ".join(classes[:5]) + (", ..." if len(classes) > 5 else "")
            raise DatasetError(
                f"{source}: {flat.positions[k]}: `{PROBABILITIES}` has {len(vector)} values but the ground "
                f"truth has {len(classes)} classes ({shown}): "
                "expected one probability per class, in the ground truth's class order"
            )
        rows[k] = float_column(vector)
    return rows, listed


def _aligned(source: str, entries: list[Any], reference: Loaded | None) -> Loaded:
    if reference is None:
        raise DatasetError(
            f"{source}: a prediction cache is aligned by position with the ground truth: "
            "expected it as the predictions, not as the ground truth"
        )
    expected = reference.dataset.image_count
    if len(entries) != expected:
        raise DatasetError(
            f"{source}: {len(entries)} predictions but the ground truth {reference.dataset.source} has "
            f"{expected} assets: expected entry i to be the prediction for asset i, one per asset"
        )
    return reference


def read_prediction_cache(
    source: str, entries: list[Any], positions: list[str], reference: Loaded | None, format_name: str
) -> Dataset:
    flat = _flatten(source, entries, positions)
    gt = _aligned(source, entries, reference)
    classes = _class_order(gt)
    probabilities, listed = _probabilities(source, flat, classes)
    corners = [[b.get(k) if isinstance(b, dict) else None for b in flat.boxes] for k in CORNERS]
    xyxy = np.stack([float_column(c) for c in corners], axis=1).reshape(len(flat.boxes), 4)
    # A value that is not a number makes the confidence NaN: the builder skips the box for it.
    confidence = probabilities.max(axis=1, initial=-np.inf)
    rows = ParsedRows(
        xyxy=xyxy,
        class_id=np.where(listed, probabilities.argmax(axis=1), -1)
        if len(flat.boxes)
        else np.empty(0, dtype=np.int64),
        image=np.array(flat.entry, dtype=np.int64),
        source_index=np.arange(len(flat.boxes)),
        position=flat.positions.__getitem__,
        confidence=confidence,
        has_confidence=np.ones(len(flat.boxes), dtype=bool),
        normalized=np.ones(len(flat.boxes), dtype=bool),
        rejected=dict.fromkeys(
            np.flatnonzero(~listed).tolist(), f"expected `{PROBABILITIES}`, a list of numbers"
        ),
    )
    images = Images(gt.dataset.asset_ids, gt.dataset.widths, gt.dataset.heights)
    return build_dataset(source, format_name, rows, images, classes)


def _read_document(source: str, entries: Any, reference: Loaded | None) -> Loaded:
    positions = [f"[{i}]" for i in range(len(entries))]
    return Loaded(read_prediction_cache(source, entries, positions, reference, "prediction-cache"))


def _read_lines(source: str, lines: LineRecords, reference: Loaded | None) -> Loaded:
    return Loaded(
        read_prediction_cache(source, lines.records, lines.positions, reference, "prediction-cache-jsonl")
    )


# A cache writes no image size: where the other side is in pixels, the GT's sizes convert it.
SIZES_FROM = "a prediction cache takes them from the ground truth"
PREDICTION_CACHE = Format(
    "prediction-cache", "json", is_prediction_cache, _read_document, sizes_from=SIZES_FROM
)
PREDICTION_CACHE_JSONL = Format(
    "prediction-cache-jsonl",
    "jsonl",
    lambda lines: is_prediction_cache(lines.records),
    _read_lines,
    sizes_from=SIZES_FROM,
)
