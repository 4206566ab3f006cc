"""The platform's native dataset format (`schemas/dataset.schema.json`), `.json` or `.jsonl`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jsonschema
import numpy as np

from handler.boxes import BoxTable, Dataset
from handler.datasets.columns import bad_box_rows, box_problem, float_column, number_or_nan
from handler.datasets.frames import to_common_frame
from handler.datasets.jsondoc import LineRecords
from handler.datasets.skips import SkipLog
from handler.errors import DatasetError
from handler.resources import schema_validator

SCHEMA = "dataset.schema.json"
CONFIDENCE_TAG = "confidence-model"


@dataclass(frozen=True)
class NativeDocument:
    """The assets of a native dataset, with how to name each asset's position in messages."""

    assets: list[Any]
    positions: list[str]
    classes: list[str]
    normalized: bool


def is_native(document: Any) -> bool:
    first = document[0] if isinstance(document, list) and document else document
    return isinstance(first, dict) and ("asset_id" in first or "assets" in first)


def from_json(source: str, document: Any) -> NativeDocument:
    if isinstance(document, list):
        assets, classes, normalized = document, [], False
    elif isinstance(document, dict) and isinstance(document.get("assets"), list):
        assets, classes = document["assets"], document.get("classes", [])
        normalized = document.get("coordinates") == "normalized"
    else:
        raise DatasetError(f"{source}: expected a list of assets or an object with an `assets` list")
    return NativeDocument(assets, [f"assets[{i}]" for i in range(len(assets))], classes, normalized)


def from_json_lines(lines: LineRecords) -> NativeDocument:
    return NativeDocument(lines.records, lines.positions, [], False)


def _check_document(source: str, document: NativeDocument) -> None:
    """Validate every asset's own fields against the schema (annotations are checked per box)."""
    validator = schema_validator(SCHEMA, "asset")
    for position, asset in zip(document.positions, document.assets, strict=True):
        header = asset
        if isinstance(asset, dict) and isinstance(asset.get("annotations"), list):
            header = {**asset, "annotations": []}
        error = jsonschema.exceptions.best_match(validator.iter_errors(header))
        if error is not None:
            where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.path)
            raise DatasetError(f"{source}: {position}{where}: {error.message}")


def _confidence(annotation: dict[str, Any]) -> float:
    """SPEC §3: `confidence`, else a numeric `confidence-model` tag, else fully confident."""
    if "confidence" in annotation:
        return number_or_nan(annotation["confidence"])
    tags = annotation.get("tags")
    if isinstance(tags, dict):
        value = tags.get(CONFIDENCE_TAG)
    elif isinstance(tags, list):
        value = next(
            (t.get("value") for t in tags if isinstance(t, dict) and t.get("name") == CONFIDENCE_TAG),
            None,
        )
    else:
        value = None
    tagged = number_or_nan(value)
    return 1.0 if np.isnan(tagged) else tagged


def read_native(source: str, document: NativeDocument, format_name: str) -> Dataset:
    _check_document(source, document)
    assets = document.assets
    annotations = [
        (i, j, a) for i, asset in enumerate(assets) for j, a in enumerate(asset.get("annotations", []))
    ]
    anns = [a for _, _, a in annotations]
    xyxy = np.stack(
        [
            float_column([a.get(k) if isinstance(a, dict) else None for a in anns])
            for k in ("x_min", "y_min", "x_max", "y_max")
        ],
        axis=1,
    ).reshape(len(anns), 4)
    labels = [a.get("label") if isinstance(a, dict) else None for a in anns]
    confidence = np.array([_confidence(a) if isinstance(a, dict) else np.nan for a in anns])
    normalized = np.array(
        [bool(a.get("normalized", document.normalized)) if isinstance(a, dict) else False for a in anns],
        dtype=bool,
    )
    bad = (
        bad_box_rows(xyxy)
        | np.isnan(confidence)
        | np.array([not isinstance(x, str) or not x for x in labels], dtype=bool)
    )
    skips = SkipLog(source)
    annotation_validator = schema_validator(SCHEMA, "annotation")
    for row in np.flatnonzero(bad):
        i, j, annotation = annotations[row]
        error = jsonschema.exceptions.best_match(annotation_validator.iter_errors(annotation))
        problem = error.message if error is not None else box_problem(xyxy[row].tolist())
        skips.add(f"{document.positions[i]}.annotations[{j}]", problem)
    good = ~bad
    class_names = list(document.classes)
    known = {name: index for index, name in enumerate(class_names)}
    for label in labels:
        if isinstance(label, str) and label and label not in known:
            known[label] = len(class_names)
            class_names.append(label)
    class_id = np.array(
        [known.get(label, -1) if isinstance(label, str) else -1 for label in labels], dtype=np.int64
    )
    boxes = BoxTable.build(
        xyxy=xyxy,
        class_id=class_id,
        image=np.array([i for i, _, _ in annotations], dtype=np.int64),
        confidence=confidence,
        source_index=np.arange(len(anns)),
        difficult=[bool(a.get("difficult", False)) if isinstance(a, dict) else False for a in anns],
    )
    widths = float_column([a.get("width") for a in assets])
    heights = float_column([a.get("height") for a in assets])
    boxes, frame_normalized = to_common_frame(
        source, boxes[good], normalized[good], widths, heights, [str(a["asset_id"]) for a in assets]
    )
    return Dataset(
        source=source,
        format=format_name,
        asset_ids=[str(a["asset_id"]) for a in assets],
        class_names=class_names,
        boxes=boxes,
        widths=widths,
        heights=heights,
        normalized=frame_normalized,
        skipped=skips.listed,
        skipped_count=skips.count,
    )
