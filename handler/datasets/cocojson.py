"""Loose decoding of COCO annotations and results: the pieces the records kernel
(`handler/kernels/json_records.py`) does not read, those with text ids, a box of another length,
an odd `iscrowd` or a number it leaves to a parser.

Such an entry becomes a `LooseEntry` (no dict per box, the fields a box does not need skipped
unparsed, `segmentation` kept as its text), whose values the COCO reader checks; anything else
is left to the plain JSON parser.
"""

from __future__ import annotations

import math
from typing import Any, Final

import msgspec
import orjson

# An entry that names no `segmentation`: as if it wrote null.
NO_SEGMENTATION: Final = msgspec.Raw(b"null")


class LooseEntry(msgspec.Struct, gc=False):
    """A COCO annotation or result with text ids, a box of another length or none (a mask's
    result), or an odd `iscrowd`."""

    image_id: int | str
    category_id: int | str
    bbox: list[float] = []  # none: a mask's result, whose box is the mask's extent
    score: float = math.nan
    iscrowd: Any = 0
    # Polygons or RLE, kept as text until masks are scored (`segmentation.py`); null: a box only.
    segmentation: msgspec.Raw = NO_SEGMENTATION


_ENTRIES: Final = msgspec.json.Decoder(list[LooseEntry])


def is_typed(entries: list[Any]) -> bool:
    """Whether a list of annotations or results was decoded as `LooseEntry`s (then all of it was)."""
    return bool(entries) and type(entries[0]) is LooseEntry


def decode_entries(text: bytes) -> list[Any] | None:
    """A JSON array of results: `LooseEntry`s when every one has the loose shape, else plain
    JSON values; None when `text` is not valid JSON."""
    try:
        entries: list[Any] = _ENTRIES.decode(text)
    except msgspec.ValidationError:
        pass
    except msgspec.DecodeError:
        return None
    else:
        return entries
    try:
        document = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return document if isinstance(document, list) else None
