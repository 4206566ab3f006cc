"""Read a dataset reference in any supported format into the box model.

The format is detected from content (not only the extension); `fmt` forces it. A reader
is a pure function of the parsed content; this module does the file access around it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from handler.boxes import Dataset
from handler.datasets.coco import (
    CocoIds,
    is_coco_instances,
    is_coco_results,
    read_coco_instances,
    read_coco_results,
)
from handler.datasets.jsondoc import looks_like_json_lines, parse_json, parse_json_lines
from handler.datasets.native import from_json, from_json_lines, is_native, read_native
from handler.errors import DatasetError
from handler.storage import Source


@dataclass(frozen=True)
class Loaded:
    """A dataset and what a paired dataset may need from it (COCO ids for a results list)."""

    dataset: Dataset
    coco_ids: CocoIds | None = None


@dataclass(frozen=True)
class JsonFormat:
    """A format stored as one JSON document or as JSON Lines."""

    name: str
    accepts: Callable[[Any], bool]
    read: Callable[[str, Any, Loaded | None], Loaded]


def _native(source: str, document: Any, _: Loaded | None) -> Loaded:
    return Loaded(read_native(source, from_json(source, document), "native"))


def _native_lines(source: str, records: Any, _: Loaded | None) -> Loaded:
    return Loaded(read_native(source, from_json_lines(records), "native-jsonl"))


def _coco(source: str, document: Any, _: Loaded | None) -> Loaded:
    dataset, ids = read_coco_instances(source, document, "coco")
    return Loaded(dataset, ids)


def _coco_results(source: str, document: Any, reference: Loaded | None) -> Loaded:
    dataset = read_coco_results(
        source,
        document,
        "coco-results",
        reference.dataset if reference else None,
        reference.coco_ids if reference else None,
    )
    return Loaded(dataset)


JSON_FORMATS: list[JsonFormat] = [
    JsonFormat("coco", is_coco_instances, _coco),
    JsonFormat("coco-results", is_coco_results, _coco_results),
    JsonFormat("native", is_native, _native),
]
JSON_LINES_FORMATS: list[JsonFormat] = [
    JsonFormat("native-jsonl", lambda records: bool(records) and is_native(records), _native_lines),
]


def format_names() -> list[str]:
    return [f.name for f in JSON_FORMATS + JSON_LINES_FORMATS]


def _choose(source: Source, formats: list[JsonFormat], document: Any, forced: str | None) -> JsonFormat:
    if forced is not None:
        for candidate in formats:
            if candidate.name == forced:
                return candidate
        raise DatasetError(
            f"{source.name}: format {forced!r} cannot read this file; expected one of "
            + ", ".join(f.name for f in formats)
        )
    for candidate in formats:
        if candidate.accepts(document):
            return candidate
    raise DatasetError(f"{source.name}: unknown dataset format; tried " + ", ".join(f.name for f in formats))


def load_dataset(source: Source, fmt: str | None = None, reference: Loaded | None = None) -> Loaded:
    """Read `source` (a file or folder) as a dataset; `reference` is the GT, for formats that
    name images and classes through it (COCO results lists)."""
    if fmt is not None and fmt not in format_names():
        raise DatasetError(f"format {fmt!r} is not supported; expected one of {', '.join(format_names())}")
    if source.is_dir():
        raise DatasetError(f"{source.name}: a folder, but no folder format matches its files")
    content = source.read_bytes()
    lines_format = fmt in {f.name for f in JSON_LINES_FORMATS}
    if lines_format or (
        fmt is None and (source.basename.endswith(".jsonl") or looks_like_json_lines(content))
    ):
        records = parse_json_lines(source, content)
        chosen = _choose(source, JSON_LINES_FORMATS, records, fmt)
        return chosen.read(source.name, records, reference)
    document = parse_json(source, content)
    chosen = _choose(source, JSON_FORMATS, document, fmt)
    return chosen.read(source.name, document, reference)
