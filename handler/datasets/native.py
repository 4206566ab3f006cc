"""The platform's native dataset format (`schemas/dataset.schema.json`), `.json` or `.jsonl`."""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import closing
from functools import cache, partial
from itertools import chain
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np
from msgspec import UNSET

from handler.boxes import AssetTags, BoolArray, Dataset, FloatArray, Images, IntArray, ParsedRows
from handler.datasets import jsondoc
from handler.datasets.builder import LABEL_MIN_LENGTH, build_dataset
from handler.datasets.columns import float_column, number_or_nan
from handler.datasets.format import Format
from handler.datasets.jsondoc import LineRecords, gc_paused, parse_json
from handler.datasets.loaded import Loaded
from handler.datasets.nativejson import (
    Annotation,
    Asset,
    AssetPieces,
    asset_pieces,
    decode_native,
    typed_assets,
)
from handler.errors import DatasetError
from handler.forked import forked_map
from handler.resources import schema_validator
from handler.storage import Source

if TYPE_CHECKING:
    import jsonschema

SCHEMA = "dataset.schema.json"
CONFIDENCE_TAG = "confidence-model"


class NativeDocument(msgspec.Struct, frozen=True):
    """The assets of a native dataset, with how to name each asset's position in messages."""

    assets: list[Any]
    positions: list[str]
    classes: list[str]
    normalized: bool


def is_native(document: Any) -> bool:
    first = document[0] if isinstance(document, list) and document else document
    return type(first) in (Asset, AssetPieces) or (
        isinstance(first, dict) and ("asset_id" in first or "assets" in first)
    )


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


def _check_sizes(source: str, positions: list[str], asset_at: Callable[[int], Asset], images: Images) -> None:
    """Of `Asset`s the decoder checked all but the sizes: validate, as written, only an asset
    with a size that is not positive."""
    with np.errstate(invalid="ignore"):
        sized = (np.isnan(images.widths) | (images.widths > 0)) & (
            np.isnan(images.heights) | (images.heights > 0)
        )
    for index in np.flatnonzero(~sized).tolist():
        _check_asset(source, positions[index], msgspec.to_builtins(asset_at(index)))


def _confidence(annotation: dict[str, Any]) -> float | None:
    """contract §3: `confidence` (NaN if not a number), else a numeric `confidence-model` tag, else None."""
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


def _first_rows(counts: IntArray) -> tuple[IntArray, IntArray]:
    """Each row's asset, and each asset's first row, of assets with `counts` annotations."""
    image = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    return image, np.cumsum(counts) - counts


def _native_rows(
    values: _Values, class_id: IntArray, counts: IntArray, positions: list[str], written: Callable[[int], Any]
) -> ParsedRows:
    """The rows of annotations, named by their asset's position; `written(row)` the
    annotation as written (for the schema's words on a skipped one)."""
    image, starts = _first_rows(counts)

    def position(row: int) -> str:
        asset = int(image[row])
        return f"{positions[asset]}.annotations[{row - int(starts[asset])}]"

    return ParsedRows(
        xyxy=values.xyxy,
        class_id=class_id,
        image=image,
        source_index=np.arange(len(class_id)),
        position=position,
        confidence=values.confidence,
        has_confidence=values.has_confidence,
        normalized=values.normalized,
        difficult=values.difficult,
        explain=lambda row: _schema_problem(written(row)),
        angle=values.angle if values.angle.any() else None,
    )


class _Values(msgspec.Struct, frozen=True):
    """The annotations' values the builder takes but the class."""

    xyxy: FloatArray
    confidence: FloatArray
    has_confidence: BoolArray
    normalized: BoolArray
    difficult: BoolArray
    angle: FloatArray  # `rotation`, 0 where not written (NaN where not a number)

    @classmethod
    def joined(cls, parts: list[_Values]) -> _Values:
        """The values of parts in order (one part: itself, not a copy)."""
        if len(parts) == 1:
            return parts[0]
        return cls(*(np.concatenate([getattr(p, name) for p in parts]) for name in cls.__struct_fields__))


def _plain_values(anns: list[Any], normalized: bool) -> _Values:
    """Values of parsed JSON, each checked: a value of the wrong type is NaN or False."""
    xyxy = np.stack(
        [
            float_column([a.get(k) if isinstance(a, dict) else None for a in anns])
            for k in ("x_min", "y_min", "x_max", "y_max")
        ],
        axis=1,
    ).reshape(len(anns), 4)
    confidences = [_confidence(a) if isinstance(a, dict) else math.nan for a in anns]
    return _Values(
        xyxy,
        float_column(confidences),
        np.array([c is not None for c in confidences], dtype=bool),
        np.array(
            [bool(a.get("normalized", normalized)) if isinstance(a, dict) else False for a in anns],
            dtype=bool,
        ),
        np.array(
            [bool(a.get("difficult", False)) if isinstance(a, dict) else False for a in anns], dtype=bool
        ),
        float_column([a.get("rotation", 0) if isinstance(a, dict) else 0 for a in anns]),
    )


def _read_plain(source: str, document: NativeDocument, format_name: str) -> Dataset:
    """Assets of parsed JSON: each validated, then each value checked."""
    _check_document(source, document)  # before a plain asset is read
    assets = document.assets
    per_asset = [a.get("annotations", []) for a in assets]
    anns = list(chain.from_iterable(per_asset))
    labels = [a.get("label") if isinstance(a, dict) else None for a in anns]
    class_id, class_names = _class_ids(
        [label if isinstance(label, str) else None for label in labels], document.classes
    )
    counts = np.fromiter(map(len, per_asset), np.int64, len(per_asset))
    rows = _native_rows(
        _plain_values(anns, document.normalized), class_id, counts, document.positions, anns.__getitem__
    )
    widths = float_column([a.get("width") for a in assets])
    heights = float_column([a.get("height") for a in assets])
    images = Images([str(a["asset_id"]) for a in assets], widths, heights, [asset_tags(a) for a in assets])
    return build_dataset(source, format_name, rows, images, class_names)


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
        _flags(anns, "normalized", normalized),
        _flags(anns, "difficult", False),
        np.fromiter(map(attrgetter("rotation"), anns), np.float64, n),
    )


class _Piece(msgspec.Struct, frozen=True):
    """The typed read of some assets, in columns: what a forked worker sends back."""

    images: Images
    counts: IntArray  # annotations per asset
    values: _Values
    labels: list[str]  # distinct, in order of first use
    codes: IntArray  # each annotation's label, as an index into `labels`


def _typed_piece(assets: list[Asset], normalized: bool) -> _Piece:
    """`Asset`s in columns: one pass per field."""
    per_asset = list(map(attrgetter("annotations"), assets))
    anns = list(chain.from_iterable(per_asset))
    labels = list(map(attrgetter("label"), anns))
    distinct = {label: index for index, label in enumerate(dict.fromkeys(labels))}
    widths = np.fromiter(map(attrgetter("width"), assets), np.float64, len(assets))
    heights = np.fromiter(map(attrgetter("height"), assets), np.float64, len(assets))
    tags = [() if a.tags is UNSET else asset_tags({"tags": a.tags}) for a in assets]
    return _Piece(
        Images([str(a.asset_id) for a in assets], widths, heights, tags),
        np.fromiter(map(len, per_asset), np.int64, len(per_asset)),
        _typed_values(anns, normalized),
        list(distinct),
        np.fromiter(map(distinct.__getitem__, labels), np.int64, len(labels)),
    )


def _joined_classes(pieces: list[_Piece], declared: list[str]) -> tuple[IntArray, list[str]]:
    """Each annotation's class, classes named in order of first use over the pieces in order."""
    distinct = list(dict.fromkeys(chain.from_iterable(p.labels for p in pieces)))
    ids, class_names = _class_ids(list(distinct), declared)
    index = {label: k for k, label in enumerate(distinct)}
    per_piece = [ids[np.array([index[label] for label in p.labels], dtype=np.int64)][p.codes] for p in pieces]
    return (per_piece[0] if len(per_piece) == 1 else np.concatenate(per_piece)), class_names


def _read_typed(
    source: str,
    document: NativeDocument,
    pieces: list[_Piece],
    asset_at: Callable[[int], Asset],
    format_name: str,
) -> Dataset:
    """Assets read typed, in pieces (one, or one per forked worker); `asset_at(i)` is asset i
    itself, for the schema's words on a skipped annotation or a bad size."""
    images = Images(
        [asset_id for p in pieces for asset_id in p.images.asset_ids],
        np.concatenate([p.images.widths for p in pieces]),
        np.concatenate([p.images.heights for p in pieces]),
        [tags for p in pieces for tags in (p.images.tags or ())],
    )
    _check_sizes(source, document.positions, asset_at, images)
    counts = np.concatenate([p.counts for p in pieces])
    class_id, class_names = _joined_classes(pieces, document.classes)
    image, starts = _first_rows(counts)

    def written(row: int) -> Any:
        asset = int(image[row])
        return msgspec.to_builtins(asset_at(asset).annotations[row - int(starts[asset])])

    values = _Values.joined([p.values for p in pieces])
    rows = _native_rows(values, class_id, counts, document.positions, written)
    return build_dataset(source, format_name, rows, images, class_names)


def read_native(source: str, document: NativeDocument, format_name: str) -> Dataset:
    """Typed when every value has the usual shape (a JSON Lines file's records converted),
    else from the plain values, each checked."""
    typed = typed_assets(document.assets)
    if typed is None:
        return _read_plain(source, document, format_name)
    piece = _typed_piece(typed, document.normalized)
    return _read_typed(source, document, [piece], typed.__getitem__, format_name)


def _piece_read(pieces: AssetPieces, normalized: bool, index: int) -> _Piece | None:
    """Piece `index` read typed, in a forked worker; None when it does not decode."""
    with gc_paused():
        assets = pieces.piece(index)
        return None if assets is None else _typed_piece(assets, normalized)


def _read_pieces(source: str, pieces: AssetPieces) -> Loaded | None:
    """A big document's assets decoded and read side by side on the local processes, exactly
    as the serial reading; None when a piece does not decode."""
    header = pieces.header or {}
    normalized = header.get("coordinates") == "normalized"
    work = partial(_piece_read, pieces, normalized)
    with closing(forked_map(work, range(len(pieces.bounds)), pieces.workers)) as parts:
        read = []
        for part in parts:
            if part is None:
                return None
            read.append(part)
    firsts = np.cumsum([0, *(len(part.counts) for part in read)])
    cached = cache(pieces.piece)

    def asset_at(index: int) -> Asset:
        piece = int(np.searchsorted(firsts, index, side="right")) - 1
        assets = cached(piece)
        assert assets is not None  # it decoded in its worker
        return assets[index - int(firsts[piece])]

    classes = header.get("classes", [])
    native = NativeDocument([], [f"assets[{i}]" for i in range(int(firsts[-1]))], classes, normalized)
    dataset = _read_typed(source, native, read, asset_at, "native")
    return Loaded(dataset, class_order=list(classes) or None)


def _read_document(source: str, document: Any, _: Loaded | None) -> Loaded:
    if isinstance(document, AssetPieces):
        loaded = _read_pieces(source, document)
        if loaded is not None:
            return loaded
        document = _decode_whole(document.source, document.content)
    native = from_json(source, document)
    return Loaded(read_native(source, native, "native"), class_order=list(native.classes) or None)


def _read_lines(source: str, lines: LineRecords, _: Loaded | None) -> Loaded:
    return Loaded(read_native(source, from_json_lines(lines), "native-jsonl"))


def _decode_whole(source: Source, content: bytes) -> Any:
    """The document typed (`nativejson`), else as plain JSON values."""
    with gc_paused():
        typed = decode_native(content)
    return parse_json(source, content) if typed is None else typed


def _decode(source: Source, content: bytes, workers: int) -> Any | None:
    """A native document typed (`nativejson`), the fast path of the large ones: a big one in
    pieces that the reader decodes side by side, when the run may use several processes."""
    if len(content) >= jsondoc.PARALLEL_MIN_BYTES and workers > 1:
        pieces = asset_pieces(source, content, jsondoc.PIECE_BYTES, workers)
        if pieces is not None:
            return pieces
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
