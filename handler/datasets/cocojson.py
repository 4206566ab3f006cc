"""Typed decoding of COCO files, the ones that get large: the fast path of their parsing.

An annotation or result of the usual shape becomes an `Entry` (no dict per box, and the
fields a box does not need are skipped unparsed; `segmentation` is kept as its text): integer ids and
four numbers, checked by the decoder, so that its columns are read without a check per row.
One with text ids or a box of another length becomes a `LooseEntry`, whose values the COCO
reader checks; anything else is left to the plain JSON parser.
"""

from __future__ import annotations

import math
from typing import Any, Final

import msgspec
import orjson

# An entry that names no `segmentation`: as if it wrote null.
NO_SEGMENTATION: Final = msgspec.Raw(b"null")


class Result(msgspec.Struct, gc=False):
    """A COCO result of the usual shape (integer ids, a box of four numbers) in a text that
    names no `iscrowd`: then no box is a crowd, and the field costs nothing."""

    image_id: int
    category_id: int
    bbox: tuple[float, float, float, float]
    score: float = math.nan  # no score: the builder's default applies
    # Polygons or RLE, kept as text until masks are scored (`segmentation.py`); null: a box only.
    segmentation: msgspec.Raw = NO_SEGMENTATION


class Entry(Result, gc=False):
    """A COCO annotation or result of the usual shape: integer ids, a box of four numbers."""

    iscrowd: int = 0


class LooseEntry(msgspec.Struct, gc=False):
    """A COCO annotation or result with text ids, a box of another length or none (a mask's
    result), or an odd `iscrowd`."""

    image_id: int | str
    category_id: int | str
    bbox: list[float] = []  # none: a mask's result, whose box is the mask's extent
    score: float = math.nan
    iscrowd: Any = 0
    segmentation: msgspec.Raw = NO_SEGMENTATION


class _Instances(msgspec.Struct, gc=False):
    images: list[dict[str, Any]]
    annotations: list[Entry]
    categories: list[dict[str, Any]]


class _LooseInstances(msgspec.Struct, gc=False):
    images: list[dict[str, Any]]
    annotations: list[LooseEntry]
    categories: list[dict[str, Any]]


# The decoders tried in turn: the first whose shape every entry has gives the entries.
_ENTRIES: Final = (msgspec.json.Decoder(list[Entry]), msgspec.json.Decoder(list[LooseEntry]))
_RESULTS: Final = (msgspec.json.Decoder(list[Result]), _ENTRIES[1])
# Bytes of which a text that names an `iscrowd` key holds one: the key's `w`, or the `\` of a
# \u escape (the only other way to spell it). A result list usually holds neither, and
# looking for one byte is cheap (for `"iscrowd"` itself it is not: `"` is everywhere).
_CROWD_MARKS: Final = (b"w", b"\\")
_INSTANCES: Final = (msgspec.json.Decoder(_Instances), msgspec.json.Decoder(_LooseInstances))
_INSTANCES_KEYS: Final = (b'"images"', b'"annotations"', b'"categories"')


def _first_fitting(decoders: tuple[msgspec.json.Decoder[Any], ...], text: bytes) -> Any | None:
    """What the first decoder whose shape fits every value decodes; None when none fits.
    Text that is not JSON raises `msgspec.DecodeError`."""
    for decoder in decoders:
        try:
            return decoder.decode(text)
        except msgspec.ValidationError:
            continue
    return None


def is_typed(entries: list[Any]) -> bool:
    """Whether a list of annotations or results was decoded as `Entry`s or `LooseEntry`s (then
    all of it was, as the same one)."""
    return bool(entries) and type(entries[0]) in (Entry, Result, LooseEntry)


def is_usual(entries: list[Any]) -> bool:
    """Whether a list of annotations or results was decoded as `Entry`s or `Result`s (then all
    of it was, as the same one)."""
    return bool(entries) and type(entries[0]) in (Entry, Result)


def names_crowds(entries: list[Any]) -> bool:
    """Whether entries may have an `iscrowd` (all but `Result`s, decoded from a text naming none)."""
    return not entries or type(entries[0]) is not Result


def decode_entries(text: bytes) -> list[Any] | None:
    """A JSON array of results: `Entry`s (`Result`s when no `iscrowd` is named) when every one
    has the usual shape, `LooseEntry`s when every one has the loose one, else plain JSON
    values; None when `text` is not valid JSON."""
    try:
        crowds = any(mark in text for mark in _CROWD_MARKS)
        entries: list[Any] | None = _first_fitting(_ENTRIES if crowds else _RESULTS, text)
    except msgspec.DecodeError:
        return None
    if entries is not None:
        return entries
    try:
        document = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return document if isinstance(document, list) else None


def decode_instances(content: bytes) -> dict[str, Any] | None:
    """A COCO instances document (`images`, `annotations` as `Entry`s, `categories`), or None
    when `content` is anything else or has an odd value (the plain parser then reads it)."""
    if not all(key in content for key in _INSTANCES_KEYS):
        return None
    try:
        document = _first_fitting(_INSTANCES, content)
    except msgspec.DecodeError:
        return None
    if document is None:
        return None
    return {"images": document.images, "annotations": document.annotations, "categories": document.categories}
