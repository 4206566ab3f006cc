"""Read a dataset reference in any supported format into the box model.

The format is detected from content (not only the extension); `fmt` forces it. A file is
JSON, JSON Lines, or else a label file read as a folder of one; a folder is detected from
its files. Each format's parser lives in its own module; this module only dispatches.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from handler.datasets.cache import is_prediction_cache, read_prediction_cache
from handler.datasets.coco import is_coco_instances, is_coco_results, read_coco_instances, read_coco_results
from handler.datasets.folder import Folder
from handler.datasets.jsondoc import (
    LineRecords,
    looks_like_json,
    looks_like_json_lines,
    parse_json,
    parse_json_lines,
)
from handler.datasets.loaded import Loaded
from handler.datasets.native import from_json, from_json_lines, is_native, read_native
from handler.datasets.textfolder import CARTUCHO, YOLO, accepts, read_text_folder
from handler.datasets.voc import looks_like_voc, read_voc_folder
from handler.errors import DatasetError
from handler.storage import Source

__all__ = ["Loaded", "format_names", "load_dataset"]

JSON_SUFFIXES = (".json", ".jsonl")


@dataclass(frozen=True)
class JsonFormat:
    """A format stored as one JSON document or as JSON Lines."""

    name: str
    accepts: Callable[[Any], bool]
    read: Callable[[str, Any, Loaded | None], Loaded]


@dataclass(frozen=True)
class FolderFormat:
    """A format stored as a folder of files, one per image."""

    name: str
    accepts: Callable[[Folder], bool]
    read: Callable[[Folder, Loaded | None], Loaded]


def _native(source: str, document: Any, _: Loaded | None) -> Loaded:
    native = from_json(source, document)
    return Loaded(read_native(source, native, "native"), class_order=list(native.classes) or None)


def _native_lines(source: str, lines: LineRecords, _: Loaded | None) -> Loaded:
    return Loaded(read_native(source, from_json_lines(lines), "native-jsonl"))


def _coco(source: str, document: Any, _: Loaded | None) -> Loaded:
    dataset, ids = read_coco_instances(source, document, "coco")
    return Loaded(dataset, ids, class_order=dataset.class_names)


def _coco_results(source: str, document: Any, reference: Loaded | None) -> Loaded:
    dataset = read_coco_results(
        source,
        document,
        "coco-results",
        reference.dataset if reference else None,
        reference.coco_ids if reference else None,
    )
    return Loaded(dataset)


def _cache(source: str, entries: Any, ref: Loaded | None) -> Loaded:
    positions = [f"[{i}]" for i in range(len(entries))]
    return Loaded(read_prediction_cache(source, entries, positions, ref, "prediction-cache"))


def _cache_lines(source: str, lines: LineRecords, ref: Loaded | None) -> Loaded:
    return Loaded(
        read_prediction_cache(source, lines.records, lines.positions, ref, "prediction-cache-jsonl")
    )


JSON_FORMATS: list[JsonFormat] = [
    JsonFormat("coco", is_coco_instances, _coco),
    JsonFormat("coco-results", is_coco_results, _coco_results),
    JsonFormat("native", is_native, _native),
    JsonFormat("prediction-cache", is_prediction_cache, _cache),
]
JSON_LINES_FORMATS: list[JsonFormat] = [
    JsonFormat("native-jsonl", lambda lines: bool(lines.records) and is_native(lines.records), _native_lines),
    JsonFormat("prediction-cache-jsonl", lambda lines: is_prediction_cache(lines.records), _cache_lines),
]
FOLDER_FORMATS: list[FolderFormat] = [
    FolderFormat("voc", looks_like_voc, read_voc_folder),
    FolderFormat("yolo", partial(accepts, YOLO), partial(read_text_folder, YOLO)),
    FolderFormat("cartucho", partial(accepts, CARTUCHO), partial(read_text_folder, CARTUCHO)),
]


def format_names() -> list[str]:
    return [f.name for f in JSON_FORMATS + JSON_LINES_FORMATS + FOLDER_FORMATS]


Format = TypeVar("Format", JsonFormat, FolderFormat)


def _choose(where: str, formats: Sequence[Format], content: Any, forced: str | None) -> Format:
    if forced is not None:
        for candidate in formats:
            if candidate.name == forced:
                return candidate
        expected = ", ".join(f.name for f in formats)
        raise DatasetError(f"{where}: format {forced!r} cannot read this; expected one of {expected}")
    for candidate in formats:
        if candidate.accepts(content):
            return candidate
    raise DatasetError(f"{where}: unknown dataset format; tried " + ", ".join(f.name for f in formats))


def _names(formats: Sequence[JsonFormat | FolderFormat]) -> set[str]:
    return {f.name for f in formats}


def _read_folder(folder: Folder, fmt: str | None, reference: Loaded | None) -> Loaded:
    if fmt in _names(FOLDER_FORMATS):
        return _choose(folder.name, FOLDER_FORMATS, folder, fmt).read(folder, reference)
    detected = next((f for f in FOLDER_FORMATS if f.accepts(folder)), None) if fmt is None else None
    if detected is not None:
        return detected.read(folder, reference)
    # A dataset id's folder (`datasets/<id>/`) may hold one JSON dataset file, images beside it,
    # or a JSON Lines dataset in shards, read in name order.
    dataset_file = folder.dataset_file(JSON_SUFFIXES)
    if dataset_file is not None:
        return load_dataset(dataset_file, fmt, reference)
    shards = folder.shards(".jsonl")
    if len(shards) > 1:
        parts = [parse_json_lines(shard, shard.read_bytes(), f"{shard.basename} ") for shard in shards]
        return _read_lines(folder.name, LineRecords.join(parts), fmt, reference)
    tried = ", ".join(f.name for f in FOLDER_FORMATS)
    if fmt is not None:
        raise DatasetError(f"{folder.name}: format {fmt!r} cannot read this; expected one of {tried}")
    raise DatasetError(f"{folder.name}: unknown dataset format; tried {tried} and one .json/.jsonl file")


def _read_lines(where: str, lines: LineRecords, fmt: str | None, reference: Loaded | None) -> Loaded:
    if fmt is not None and f"{fmt}-jsonl" in _names(JSON_LINES_FORMATS):
        fmt = f"{fmt}-jsonl"  # `native` or `prediction-cache` forced on JSON Lines means their -jsonl
    return _choose(where, JSON_LINES_FORMATS, lines, fmt).read(where, lines, reference)


def load_dataset(source: Source, fmt: str | None = None, reference: Loaded | None = None) -> Loaded:
    """Read `source` (a file or folder) as a dataset; `reference` is the GT, for formats that
    name images and classes through it (COCO results lists, prediction caches)."""
    if fmt is not None and fmt not in format_names():
        raise DatasetError(f"format {fmt!r} is not supported; expected one of {', '.join(format_names())}")
    if source.is_dir():
        return _read_folder(Folder.of(source), fmt, reference)
    content = source.read_bytes()
    # A `.json` that is not JSON gets the JSON parser's located error, not a label-file guess.
    label_file = not looks_like_json(content) and not source.basename.lower().endswith(JSON_SUFFIXES)
    if fmt in _names(FOLDER_FORMATS) or (fmt is None and label_file):
        return _read_folder(Folder.single(source, content), fmt, reference)
    lines = source.basename.lower().endswith(".jsonl") or looks_like_json_lines(content)
    lines_format = fmt is None or f"{fmt}-jsonl" in _names(JSON_LINES_FORMATS)
    if fmt in _names(JSON_LINES_FORMATS) or (lines and lines_format):
        return _read_lines(source.name, parse_json_lines(source, content), fmt, reference)
    document = parse_json(source, content)
    chosen = _choose(source.name, JSON_FORMATS, document, fmt)
    return chosen.read(source.name, document, reference)
