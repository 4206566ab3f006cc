"""The platform's native dataset format (`schemas/dataset.schema.json`), `.json` or `.jsonl`."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import chain
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np
from msgspec import UNSET

from handler.boxes import AssetTags, BoolArray, Dataset, FloatArray, IntArray
from handler.datasets.builder import LABEL_MIN_LENGTH, Images, ParsedRows, build_dataset
from handler.datasets.columns import float_column, number_or_nan
from handler.datasets.format import Format
from handler.datasets.jsondoc import LineRecords, gc_paused
from handler.datasets.loaded import Loaded
from handler.datasets.nativejson import Annotation, Asset, decode_native, typed_assets
from handler.errors import DatasetError
from handler.resources import schema_validator
from handler.storage import Source

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
    return type(first) is Asset or (isinstance(first, dict) and ("asset_id" in first or "assets" in first))


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


def _check_asset(source: str, position: str, asset: Any) -> None:
    """Validate an asset's own fields against the schema (annotations are checked per box)."""
    header = asset
    if isinstance(asset, dict) and isinstance(asset.get("annotations"), list):
        header = {**asset, "annotations": []}
    error = _best_error(schema_validator(SCHEMA, "asset"), header)
    if error is not None:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.path)
        raise DatasetError(f"{source}: {position}{where}: {error.message}")


def _check_document(source: str, document: NativeDocument) -> None:
    """Validate every asset's own fields."""
    for position, asset in zip(document.positions, document.assets, strict=True):
        _check_asset(source, position, asset)


def _check_sizes(source: str, positions: list[str], assets: list[Asset], images: Images) -> None:
    """Of `Asset`s the decoder checked all but the sizes: validate, as written, only an asset
    with a size that is not positive."""
    with np.errstate(invalid="ignore"):
        sized = (np.isnan(images.widths) | (images.widths > 0)) & (
            np.isnan(images.heights) | (images.heights > 0)
        )
    for index in np.flatnonzero(~sized).tolist():
        _check_asset(source, positions[index], msgspec.to_builtins(assets[index]))


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


def _class_ids(labels: list[str | None], declared: list[str]) -> tuple[IntArray, list[str]]:
    """Each label's class (-1 where the label, None where not a string, breaks the schema),
    declared classes first, then the others in order of first use: a look-up per distinct label."""
    class_names = list(declared)
    known = {name: index for index, name in enumerate(class_names)}
    codes: dict[str | None, int] = {}
    for label in dict.fromkeys(labels):
        if label is None or len(label) < LABEL_MIN_LENGTH:
            codes[label] = -1
            continue
        if label not in known:
            known[label] = len(class_names)
            class_names.append(label)
        codes[label] = known[label]
    return np.fromiter(map(codes.__getitem__, labels), np.int64, len(labels)), class_names


def _schema_problem(annotation: Any) -> str | None:
    error = _best_error(schema_validator(SCHEMA, "annotation"), annotation)
    return None if error is None else str(error.message)


@dataclass(frozen=True)
class _Annotations:
    """The annotations of every asset in one list: each row's asset, where each asset's rows start."""

    rows: list[Any]
    image: IntArray
    starts: IntArray

    @classmethod
    def of(cls, per_asset: list[Any]) -> _Annotations:
        counts = np.fromiter(map(len, per_asset), np.int64, len(per_asset))
        image = np.repeat(np.arange(len(per_asset), dtype=np.int64), counts)
        return cls(list(chain.from_iterable(per_asset)), image, np.cumsum(counts) - counts)

    def position(self, positions: list[str], row: int) -> str:
        asset = int(self.image[row])
        return f"{positions[asset]}.annotations[{row - int(self.starts[asset])}]"


@dataclass(frozen=True)
class _Values:
    """The annotations' values the builder takes, and each one as written (for the schema's words)."""

    xyxy: FloatArray
    confidence: FloatArray
    has_confidence: BoolArray
    labels: list[str | None]
    normalized: BoolArray
    difficult: BoolArray
    written: Callable[[int], Any]


def _plain_values(anns: list[Any], normalized: bool) -> _Values:
    """Values of parsed JSON, each checked: a value of the wrong type is NaN, None or False."""
    xyxy = np.stack(
        [
            float_column([a.get(k) if isinstance(a, dict) else None for a in anns])
            for k in ("x_min", "y_min", "x_max", "y_max")
        ],
        axis=1,
    ).reshape(len(anns), 4)
    confidences = [_confidence(a) if isinstance(a, dict) else math.nan for a in anns]
    labels = [a.get("label") if isinstance(a, dict) else None for a in anns]
    return _Values(
        xyxy,
        float_column(confidences),
        np.array([c is not None for c in confidences], dtype=bool),
        [label if isinstance(label, str) else None for label in labels],
        np.array(
            [bool(a.get("normalized", normalized)) if isinstance(a, dict) else False for a in anns],
            dtype=bool,
        ),
        np.array(
            [bool(a.get("difficult", False)) if isinstance(a, dict) else False for a in anns], dtype=bool
        ),
        anns.__getitem__,
    )


def _flags(anns: list[Annotation], name: str, default: bool) -> BoolArray:
    """A typed boolean field of every annotation, `default` where not written."""
    values = list(map(attrgetter(name), anns))
    if values.count(UNSET) == len(values):
        return np.full(len(values), default, dtype=bool)
    return np.array([default if value is UNSET else value for value in values], dtype=bool)


def _typed_values(anns: list[Annotation], normalized: bool) -> _Values:
    """Values of `Annotation`s, whose types the decoder checked: one pass per field, no check
    per row (but per row with tags and no confidence: a `confidence-model` tag may give one)."""
    n = len(anns)
    corners = chain.from_iterable(map(attrgetter("x_min", "y_min", "x_max", "y_max"), anns))
    confidence = np.fromiter(map(attrgetter("confidence"), anns), np.float64, n)
    has_confidence = ~np.isnan(confidence)  # JSON cannot write a NaN: NaN is not written
    for row in np.flatnonzero(~has_confidence).tolist():
        if anns[row].tags is not UNSET:
            tagged = _confidence({"tags": anns[row].tags})
            confidence[row], has_confidence[row] = (math.nan, False) if tagged is None else (tagged, True)
    return _Values(
        np.fromiter(corners, np.float64, 4 * n).reshape(n, 4),
        confidence,
        has_confidence,
        list(map(attrgetter("label"), anns)),
        _flags(anns, "normalized", normalized),
        _flags(anns, "difficult", False),
        lambda row: msgspec.to_builtins(anns[row]),
    )


def _images(assets: list[Any], *, typed: bool) -> Images:
    if typed:
        widths = np.fromiter(map(attrgetter("width"), assets), np.float64, len(assets))
        heights = np.fromiter(map(attrgetter("height"), assets), np.float64, len(assets))
        tags = [() if a.tags is UNSET else asset_tags({"tags": a.tags}) for a in assets]
        return Images([str(a.asset_id) for a in assets], widths, heights, tags)
    widths = float_column([a.get("width") for a in assets])
    heights = float_column([a.get("height") for a in assets])
    return Images([str(a["asset_id"]) for a in assets], widths, heights, [asset_tags(a) for a in assets])


def _read_assets(source: str, document: NativeDocument) -> tuple[Images, _Annotations, _Values]:
    """The assets checked, their images, their annotations and the annotations' values: typed
    when every value has the usual shape (a JSON Lines file's records converted), else from
    the plain values, each checked."""
    typed = typed_assets(document.assets)
    if typed is None:
        _check_document(source, document)  # before a plain asset is read
        annotations = _Annotations.of([a.get("annotations", []) for a in document.assets])
        plain = _images(document.assets, typed=False)
        return plain, annotations, _plain_values(annotations.rows, document.normalized)
    images = _images(typed, typed=True)
    _check_sizes(source, document.positions, typed, images)
    annotations = _Annotations.of(list(map(attrgetter("annotations"), typed)))
    return images, annotations, _typed_values(annotations.rows, document.normalized)


def read_native(source: str, document: NativeDocument, format_name: str) -> Dataset:
    images, annotations, values = _read_assets(source, document)
    class_id, class_names = _class_ids(values.labels, document.classes)
    rows = ParsedRows(
        xyxy=values.xyxy,
        class_id=class_id,
        image=annotations.image,
        source_index=np.arange(len(annotations.rows)),
        position=partial(annotations.position, document.positions),
        confidence=values.confidence,
        has_confidence=values.has_confidence,
        normalized=values.normalized,
        difficult=values.difficult,
        explain=lambda row: _schema_problem(values.written(row)),
    )
    return build_dataset(source, format_name, rows, images, class_names)


def _read_document(source: str, document: Any, _: Loaded | None) -> Loaded:
    native = from_json(source, document)
    return Loaded(read_native(source, native, "native"), class_order=list(native.classes) or None)


def _read_lines(source: str, lines: LineRecords, _: Loaded | None) -> Loaded:
    return Loaded(read_native(source, from_json_lines(lines), "native-jsonl"))


def _decode(_: Source, content: bytes) -> Any | None:
    """A native document with typed assets (`nativejson`): the fast path of the large ones."""
    with gc_paused():
        return decode_native(content)


NATIVE = Format("native", "json", is_native, _read_document, decode=_decode)
NATIVE_JSONL = Format(
    "native-jsonl",
    "jsonl",
    lambda lines: bool(lines.records) and is_native(lines.records),
    _read_lines,
    reads_shards=True,
)
