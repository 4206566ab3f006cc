"""Typed decoding of native JSON documents, the ones that get large: the fast path of their parsing.

A native document of the usual shape (`schemas/dataset.schema.json`) becomes `Asset`s holding
`Annotation`s: no dict per box, every coordinate a number, every label a string, checked by
the decoder, so that the reader takes its columns without a check per row. Integers stay
integers (a message quotes a value as the file wrote it). The records of a JSON Lines file,
parsed line by line, are converted to the same types. Anything else, such as a box value that
is null or a label that is a number, is left to the plain JSON parser and its reader.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Final

import msgspec
from msgspec import UNSET, UnsetType

from handler.datasets.jsondoc import gc_paused

# An integer that fits int64 (the plain parser gives a float beyond 64 bits: such a file is left to it).
Integer = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
Number = Integer | float


class Annotation(msgspec.Struct, gc=False, omit_defaults=True):
    """A box with a label and four numbers. A field not written keeps its default: NaN for a
    number (JSON cannot write one), UNSET for the others; `msgspec.to_builtins` gives the
    annotation as written (for the schema's words on a skipped one)."""

    label: str
    x_min: Number
    y_min: Number
    x_max: Number
    y_max: Number
    confidence: Number = math.nan
    normalized: bool | UnsetType = UNSET
    difficult: bool | UnsetType = UNSET
    tags: Any = UNSET


class Asset(msgspec.Struct, gc=False, omit_defaults=True):
    """An asset: its id, its size (NaN where not written), its annotations and tags."""

    asset_id: str | Integer
    width: Number = math.nan
    height: Number = math.nan
    annotations: list[Annotation] = msgspec.field(default_factory=list)
    tags: Any = UNSET


class _Document(msgspec.Struct, gc=False):
    assets: list[Asset]
    classes: list[str] = msgspec.field(default_factory=list)
    coordinates: Any = None
    # What makes an object a COCO instances file: a document that has both is left to the
    # plain parser, so that detection sees what it always saw.
    images: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)
    annotations: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)


_DOCUMENT: Final = msgspec.json.Decoder(_Document)
_ASSETS: Final = msgspec.json.Decoder(list[Asset])
_ASSET_KEY: Final = b'"asset_id"'
_WHITESPACE: Final = b"\xef\xbb\xbf \t\r\n"


def typed_assets(assets: list[Any]) -> list[Asset] | None:
    """The assets as `Asset`s: decoded so (then all of them were), or plain values of the usual
    shape converted (the records of a JSON Lines file), checked as the decoder checks them;
    None when a value has another shape."""
    if assets and type(assets[0]) is Asset:
        return assets
    try:
        with gc_paused():
            return msgspec.convert(assets, list[Asset])
    except msgspec.ValidationError:
        return None


def decode_native(content: bytes) -> dict[str, Any] | list[Asset] | None:
    """A native document as the plain parser gives it, its assets as `Asset`s: an object with
    `assets` (and `classes`, `coordinates` when written), or a list of assets; None when
    `content` is anything else or has a value of another shape (a null box value, a label
    that is not a string...), and then the plain parser reads it."""
    start = content.lstrip(_WHITESPACE)[:1]
    if start not in (b"{", b"[") or _ASSET_KEY not in content:
        return None
    try:
        if start == b"[":
            return _ASSETS.decode(content) or None
        document = _DOCUMENT.decode(content)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    if document.images and document.annotations:
        return None
    plain: dict[str, Any] = {"assets": document.assets, "classes": document.classes}
    if document.coordinates is not None:
        plain["coordinates"] = document.coordinates
    return plain
