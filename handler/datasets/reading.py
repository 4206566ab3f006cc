"""Read a dataset reference in any supported format into the box model.

The format is detected from content (not only the extension); `fmt` forces it. A file is
JSON, JSON Lines, or else a label file read as a folder of one; a folder is detected from
its files. Each format is one `Format` record in its own module, listed once in `FORMATS`;
this module only dispatches.
"""

from __future__ import annotations

from typing import Any

from handler.datasets.coco import COCO, COCO_RESULTS
from handler.datasets.cvat import CVAT
from handler.datasets.folder import Folder
from handler.datasets.format import ANY_NAMES_FILE, Format, ImagesFolder, Kind
from handler.datasets.jsondoc import (
    LineRecords,
    looks_like_json,
    looks_like_json_lines,
    nested_too_deeply,
    parse_json,
    parse_json_lines,
)
from handler.datasets.labelstudio import LABEL_STUDIO, LABEL_STUDIO_MIN
from handler.datasets.loaded import Loaded
from handler.datasets.native import NATIVE, NATIVE_JSONL
from handler.datasets.prediction_cache import PREDICTION_CACHE, PREDICTION_CACHE_JSONL
from handler.datasets.read_options import NO_OPTIONS, ReadOptions
from handler.datasets.textfolder import (
    CARTUCHO_FORMAT,
    DOTA_FORMAT,
    YOLO_FORMAT,
    YOLO_OBB_FORMAT,
    YOLO_SEG_FORMAT,
    unread_label_line,
)
from handler.datasets.voc import VOC
from handler.errors import DatasetError
from handler.storage import Source

__all__ = [
    "FORMATS",
    "Loaded",
    "format_names",
    "images_folder",
    "load_dataset",
    "names_from",
    "parse_document",
    "shard_format",
    "shards_readable",
    "sizes_from",
]

JSON_SUFFIXES = (".json", ".jsonl")

# Every format, tried in this order within its kind. A new format: its module, and one line here.
FORMATS: list[Format] = [
    COCO,
    COCO_RESULTS,
    NATIVE,
    LABEL_STUDIO,
    LABEL_STUDIO_MIN,
    PREDICTION_CACHE,
    NATIVE_JSONL,
    PREDICTION_CACHE_JSONL,
    CVAT,
    VOC,
    YOLO_FORMAT,
    YOLO_SEG_FORMAT,
    YOLO_OBB_FORMAT,
    DOTA_FORMAT,
    CARTUCHO_FORMAT,
]


def format_names() -> list[str]:
    return [f.name for f in FORMATS]


def _named(name: str) -> Format | None:
    return next((f for f in FORMATS if f.name == name), None)


def names_from(format_name: str) -> str:
    """Where a dataset read in this format gets class names: the fix when they are numeric ids."""
    known = _named(format_name)
    return known.names_from if known else ANY_NAMES_FILE


def sizes_from(format_name: str) -> str:
    """Where a dataset read in this format gets image sizes when it cannot write them ('': nowhere)."""
    known = _named(format_name)
    return known.sizes_from if known else ""


def images_folder(format_name: str) -> ImagesFolder | None:
    """Where a dataset read in this format keeps its images, when the format says (None: it does not)."""
    known = _named(format_name)
    return known.images if known else None


def shard_format() -> Format:
    """The format of the shard files that workers read on their own (JSON Lines, an asset a line)."""
    return next(f for f in FORMATS if f.reads_shards)


def _lines_variant(fmt: str | None) -> str | None:
    """The JSON Lines format a forced name means on JSON Lines: `native` means `native-jsonl`."""
    if fmt is not None and f"{fmt}-jsonl" in _names("jsonl"):
        return f"{fmt}-jsonl"
    return fmt


def shards_readable(forced: str | None) -> bool:
    """Whether shard files may be read as `shard_format()` when this format is forced (None: none is)."""
    return forced is None or _lines_variant(forced) == shard_format().name


def parse_document(source: Source, content: bytes, workers: int = 1) -> Any:
    """A JSON document as the readers take it: the first format's fast decoding that recognises
    the content (a large COCO file's), else plain JSON values; `workers`: the local processes
    its reading may use."""
    for candidate in _of_kind("json"):
        decoded = candidate.decode(source, content, workers) if candidate.decode else None
        if decoded is not None:
            return decoded
    return parse_json(source, content)


def _streamed(source: Source, fmt: str | None, workers: int) -> Any | None:
    """A big JSON document that a format reads from its file in ranges (never whole), as
    `parse_document` would give it; None for anything else (read whole). Only a `[` or a `{`
    file can be one, never a label file or JSON Lines."""
    if source.basename.lower().endswith(".jsonl") or fmt in _names("jsonl") | _names("folder"):
        return None
    streams = (f.stream for f in _of_kind("json") if f.stream)
    return next((d for stream in streams if (d := stream(source, workers)) is not None), None)


def _of_kind(kind: Kind) -> list[Format]:
    return [f for f in FORMATS if f.kind == kind]


def _names(kind: Kind) -> set[str]:
    return {f.name for f in _of_kind(kind)}


def _choose(where: str, kind: Kind, content: Any, forced: str | None) -> Format:
    formats = _of_kind(kind)
    if forced is not None:
        chosen = next((candidate for candidate in formats if candidate.name == forced), None)
        if chosen is None:
            expected = ", ".join(f.name for f in formats)
            raise DatasetError(f"{where}: format {forced!r} cannot read this; expected one of {expected}")
        # A JSON reader would trip over a shape it does not know; folder readers say what they miss.
        if kind != "folder" and not chosen.accepts(content):
            raise DatasetError(
                f"{where}: format {forced!r} does not fit this content; {_looks_like(kind, content)}"
            )
        return chosen
    for candidate in formats:
        if candidate.accepts(content):
            return candidate
    raise DatasetError(f"{where}: unknown dataset format; tried " + ", ".join(f.name for f in formats))


def _refuse_wide_text(source: Source, content: bytes) -> None:
    """UTF-16/32 text (a BOM, or ASCII with zero bytes between) would fail as 'not UTF-8'."""
    wide = content[:2] in (b"\xff\xfe", b"\xfe\xff") or (
        len(content) >= 4
        and (content[1] == content[3] == 0 or content[0] == content[2] == 0)
        and any(content[:4])
    )
    if wide:
        raise DatasetError(f"{source.name}: the file is UTF-16 or UTF-32 text: save it as UTF-8")


def _looks_like(kind: Kind, content: Any) -> str:
    detected = next((f.name for f in _of_kind(kind) if f.accepts(content)), None)
    if detected is None:
        return "it looks like none of the supported formats"
    return f"it looks like {detected}: choose that format, or leave the format to detection"


def _read_folder(
    folder: Folder, fmt: str | None, reference: Loaded | None, options: ReadOptions, workers: int
) -> Loaded:
    if fmt in _names("folder"):
        return _choose(folder.name, "folder", folder, fmt).read_as(folder.name, folder, reference, options)
    detected = next((f for f in _of_kind("folder") if f.accepts(folder)), None) if fmt is None else None
    if detected is not None:
        return detected.read_as(folder.name, folder, reference, options)
    # A dataset id's folder (`datasets/<id>/`) may hold one JSON dataset file, images beside it,
    # or a JSON Lines dataset in shards, read in name order.
    dataset_file = folder.dataset_file(JSON_SUFFIXES)
    if dataset_file is not None:
        return load_dataset(dataset_file, fmt, reference, options, workers)
    shards = folder.shards(".jsonl")
    if len(shards) > 1:
        parts = [parse_json_lines(shard, shard.read_bytes(), f"{shard.basename} ") for shard in shards]
        return _read_lines(folder.name, LineRecords.join(parts), fmt, reference, options)
    tried = ", ".join(f.name for f in _of_kind("folder"))
    if fmt is not None:
        raise DatasetError(f"{folder.name}: format {fmt!r} cannot read this; expected one of {tried}")
    if folder.name.lower().endswith(JSON_SUFFIXES):
        raise DatasetError(
            f"{folder.name}: is a folder, not a JSON file: expected the dataset file itself "
            "(or a folder holding one .json/.jsonl dataset file or label files)"
        )
    raise DatasetError(
        unread_label_line(folder)
        or f"{folder.name}: unknown dataset format; tried {tried} and one .json/.jsonl file"
    )


def _read_lines(
    where: str, lines: LineRecords, fmt: str | None, reference: Loaded | None, options: ReadOptions
) -> Loaded:
    if not lines.records:  # no format can tell what an empty file is: say what is true of it
        raise DatasetError(f"{where}: no records: expected JSON Lines, one record a line")
    return _choose(where, "jsonl", lines, _lines_variant(fmt)).read_as(where, lines, reference, options)


def load_dataset(
    source: Source,
    fmt: str | None = None,
    reference: Loaded | None = None,
    options: ReadOptions = NO_OPTIONS,
    workers: int = 1,
) -> Loaded:
    """Read `source` (a file or folder) as a dataset; `reference` is the GT, for formats that
    name images and classes through it (COCO results lists, prediction caches); `options` the
    class names and column layout the user gave for this side; `workers` the local processes a
    big file may be decoded on."""
    try:
        return _load(source, fmt, reference, options, workers)
    except RecursionError:  # a decoder or a reader walking a deeply nested value
        raise nested_too_deeply(source.name) from None


def _load(
    source: Source, fmt: str | None, reference: Loaded | None, options: ReadOptions, workers: int
) -> Loaded:
    if fmt is not None and fmt not in format_names():
        raise DatasetError(f"format {fmt!r} is not supported; expected one of {', '.join(format_names())}")
    if source.is_dir():
        return _read_folder(Folder.of(source), fmt, reference, options, workers)
    streamed = _streamed(source, fmt, workers)
    if streamed is not None:
        return _choose(source.name, "json", streamed, fmt).read_as(source.name, streamed, reference, options)
    content = source.read_bytes()
    _refuse_wide_text(source, content)
    # A `.json` that is not JSON gets the JSON parser's located error, not a label-file guess.
    label_file = not looks_like_json(content) and not source.basename.lower().endswith(JSON_SUFFIXES)
    if fmt in _names("folder") or (fmt is None and label_file):
        return _read_folder(Folder.single(source, content), fmt, reference, options, workers)
    lines = source.basename.lower().endswith(".jsonl") or looks_like_json_lines(content)
    lines_format = fmt is None or _lines_variant(fmt) != fmt
    if fmt in _names("jsonl") or (lines and lines_format):
        return _read_lines(source.name, parse_json_lines(source, content), fmt, reference, options)
    document = parse_document(source, content, workers)
    return _choose(source.name, "json", document, fmt).read_as(source.name, document, reference, options)
