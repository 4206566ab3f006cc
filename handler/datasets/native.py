"""The platform's native dataset format (`schemas/dataset.schema.json`), `.json` or `.jsonl`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from handler.boxes import AssetTags, Dataset, IntArray
from handler.datasets.builder import LABEL_MIN_LENGTH, Images, ParsedRows, build_dataset
from handler.datasets.columns import float_column, number_or_nan
from handler.datasets.format import Format
from handler.datasets.jsondoc import LineRecords
from handler.datasets.loaded import Loaded
from handler.errors import DatasetError
from handler.resources import schema_validator

if TYPE_CHECKING:
    import jsonschema

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


def _best_error(
    validator: jsonschema.protocols.Validator, instance: Any
) -> jsonschema.ValidationError | None:
    """The error that says best why `instance` breaks the schema; None when it does not.

    jsonschema is imported here, by a run that reads a native file, not by every run."""
    from jsonschema.exceptions import best_match

    error: jsonschema.ValidationError | None = best_match(validator.iter_errors(instance))
    return error


def _check_document(source: str, document: NativeDocument) -> None:
    """Validate every asset's own fields against the schema (annotations are checked per box)."""
    validator = schema_validator(SCHEMA, "asset")
    for position, asset in zip(document.positions, document.assets, strict=True):
        header = asset
        if isinstance(asset, dict) and isinstance(asset.get("annotations"), list):
            header = {**asset, "annotations": []}
        error = _best_error(validator, header)
        if error is not None:
            where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.path)
            raise DatasetError(f"{source}: {position}{where}: {error.message}")


def _confidence(annotation: dict[str, Any]) -> float | None:
    """SPEC §3: `confidence` (NaN if not a number), else a numeric `confidence-model` tag, else None."""
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
    return None if np.isnan(tagged) else tagged


def asset_tags(asset: dict[str, Any]) -> AssetTags:
    """An asset's `tags`: strings, `{"name": ...}` objects, or an object of name -> value.

    A named tag with a value other than true/null reads `name=value`, so `{"weather": "rain"}` is the
    slice `weather=rain`; anything else in `tags` is ignored (tags only select slices).
    """
    tags = asset.get("tags")
    if isinstance(tags, dict):
        pairs = list(tags.items())
    elif isinstance(tags, list):
        pairs = [
            (t, None) if isinstance(t, str) else (t.get("name"), t.get("value"))
            for t in tags
            if isinstance(t, str | dict)
        ]
    else:
        return ()
    named = [(str(name), value) for name, value in pairs if isinstance(name, str | int) and str(name)]
    return tuple(dict.fromkeys(name if value in (None, True) else f"{name}={value}" for name, value in named))


def _class_ids(labels: list[Any], declared: list[str]) -> tuple[IntArray, list[str]]:
    """Each label's class (-1 where the label breaks the schema), declared classes first."""
    class_names = list(declared)
    known = {name: index for index, name in enumerate(class_names)}
    ids = np.full(len(labels), -1, dtype=np.int64)
    for row, label in enumerate(labels):
        if isinstance(label, str) and len(label) >= LABEL_MIN_LENGTH:
            index = known.get(label)
            if index is None:
                index = known[label] = len(class_names)
                class_names.append(label)
            ids[row] = index
    return ids, class_names


def _schema_problem(annotation: Any) -> str | None:
    error = _best_error(schema_validator(SCHEMA, "annotation"), annotation)
    return None if error is None else str(error.message)


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
    confidences = [_confidence(a) if isinstance(a, dict) else math.nan for a in anns]
    class_id, class_names = _class_ids(
        [a.get("label") if isinstance(a, dict) else None for a in anns], document.classes
    )
    rows = ParsedRows(
        xyxy=xyxy,
        class_id=class_id,
        image=np.array([i for i, _, _ in annotations], dtype=np.int64),
        source_index=np.arange(len(anns)),
        position=lambda row: f"{document.positions[annotations[row][0]]}.annotations[{annotations[row][1]}]",
        confidence=float_column(confidences),
        has_confidence=np.array([c is not None for c in confidences], dtype=bool),
        normalized=np.array(
            [bool(a.get("normalized", document.normalized)) if isinstance(a, dict) else False for a in anns],
            dtype=bool,
        ),
        difficult=np.array(
            [bool(a.get("difficult", False)) if isinstance(a, dict) else False for a in anns], dtype=bool
        ),
        explain=lambda row: _schema_problem(anns[row]),
    )
    widths = float_column([a.get("width") for a in assets])
    heights = float_column([a.get("height") for a in assets])
    images = Images([str(a["asset_id"]) for a in assets], widths, heights, [asset_tags(a) for a in assets])
    return build_dataset(source, format_name, rows, images, class_names)


def _read_document(source: str, document: Any, _: Loaded | None) -> Loaded:
    native = from_json(source, document)
    return Loaded(read_native(source, native, "native"), class_order=list(native.classes) or None)


def _read_lines(source: str, lines: LineRecords, _: Loaded | None) -> Loaded:
    return Loaded(read_native(source, from_json_lines(lines), "native-jsonl"))


NATIVE = Format("native", "json", is_native, _read_document)
NATIVE_JSONL = Format(
    "native-jsonl",
    "jsonl",
    lambda lines: bool(lines.records) and is_native(lines.records),
    _read_lines,
    reads_shards=True,
)
