"""Typed decoding of COCO files, the ones that get large: the fast path of their parsing.

An annotation or result of the usual shape becomes an `Entry` (no dict per box, and the
fields a box does not need, such as `segmentation`, are skipped unparsed). Anything else
is left to the plain JSON parser, whose values the COCO reader checks one by one.
"""

from __future__ import annotations

import math
from typing import Any, Final

import msgspec
import orjson


class Entry(msgspec.Struct, gc=False):
    """A COCO annotation or result of the usual shape."""

    image_id: int | str
    category_id: int | str
    bbox: list[float]
    score: float = math.nan  # no score: the builder's default applies
    iscrowd: Any = 0


class _Instances(msgspec.Struct, gc=False):
    images: list[dict[str, Any]]
    annotations: list[Entry]
    categories: list[dict[str, Any]]


_ENTRIES: Final = msgspec.json.Decoder(list[Entry])
_INSTANCES: Final = msgspec.json.Decoder(_Instances)
_INSTANCES_KEYS: Final = (b'"images"', b'"annotations"', b'"categories"')


def is_typed(entries: list[Any]) -> bool:
    """Whether a list of annotations or results was decoded as `Entry`s (then all of it was)."""
    return bool(entries) and type(entries[0]) is Entry


def decode_entries(text: bytes) -> list[Any] | None:
    """A JSON array of results: `Entry`s when every one has the usual shape, else plain JSON
    values; None when `text` is not valid JSON."""
    try:
        return _ENTRIES.decode(text)
    except msgspec.ValidationError:
        pass
    except msgspec.DecodeError:
        return None
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
        document = _INSTANCES.decode(content)
    except msgspec.DecodeError:
        return None
    return {"images": document.images, "annotations": document.annotations, "categories": document.categories}
