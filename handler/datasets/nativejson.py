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
import re
from typing import Annotated, Any, Final

import msgspec
from msgspec import UNSET, UnsetType

from handler.datasets.jsondoc import gc_paused
from handler.storage import Source

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
    rotation: Number = 0


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


# Where one asset may end and the next begin: a `}`, a comma, and an object whose first key is
# `asset_id` (group 1: its `{`). A cut inside a string or an annotation leaves a piece that
# does not decode.
_NEXT_ASSET: Final = re.compile(rb'\}\s*,\s*(\{)\s*"asset_id"\s*:')
_FIRST_ASSET: Final = re.compile(rb'\[\s*\{\s*"asset_id"\s*:')
_ASSETS_KEY: Final = re.compile(rb'"assets"\s*:\s*(\[)')
# An asset no file has, put in place of the assets to decode the rest of an object on its own.
_MARKER: Final = b'[{"asset_id": "\\u0000 the assets of this document"}]'


class AssetPieces(msgspec.Struct, frozen=True):
    """A big native document whose assets are decoded in pieces, side by side: `bounds` are
    the text of whole assets between cuts, `header` the document without its assets (None: a
    list of assets). When every piece decodes, the pieces are the assets in order: the text
    between the array's brackets is then the pieces' elements, comma-separated, and the
    array's brackets are the document's own (checked by decoding the rest with a marker in
    the array's place). A piece that does not decode sends the reader to `decode_native`."""

    source: Source
    content: bytes
    bounds: list[tuple[int, int]]
    header: dict[str, Any] | None
    workers: int  # the local processes its reader decodes the pieces on

    def piece(self, index: int) -> list[Asset] | None:
        """The assets of piece `index`; None when its text is not assets (a wrong cut)."""
        start, end = self.bounds[index]
        try:
            return _ASSETS.decode(b"[" + self.content[start:end] + b"]") or None
        except (msgspec.ValidationError, msgspec.DecodeError):
            return None


def _array_span(content: bytes) -> tuple[int, int, dict[str, Any] | None] | None:
    """(start, stop) of the text between the brackets of the assets array, and the document
    without it (None: the document is the array); None when that is not certain."""
    first = len(content) - len(content.lstrip(_WHITESPACE))
    last = len(content.rstrip(_WHITESPACE)) - 1
    if content[first : first + 1] == b"[" and content[last : last + 1] == b"]":
        return (first + 1, last, None) if _FIRST_ASSET.match(content, first) else None
    key = _ASSETS_KEY.search(content, first)
    if content[first : first + 1] != b"{" or content[last : last + 1] != b"}" or key is None:
        return None
    closing = len(content[:last].rstrip(_WHITESPACE)) - 1  # the array must close the object
    if content[closing : closing + 1] != b"]":
        return None
    header = decode_native(content[: key.start(1)] + _MARKER + content[closing + 1 :])
    marker = msgspec.json.decode(_MARKER, type=list[Asset])
    if not isinstance(header, dict) or header["assets"] != marker:
        return None
    return key.start(1) + 1, closing, {name: value for name, value in header.items() if name != "assets"}


def asset_pieces(source: Source, content: bytes, piece_bytes: int, workers: int) -> AssetPieces | None:
    """The assets of a native document (an object with `assets` last, or a list of assets,
    each asset's first key `asset_id`) cut into pieces of about `piece_bytes`; None when the
    document is of another shape or makes a single piece."""
    span = _array_span(content)
    if span is None:
        return None
    start, stop, header = span
    bounds, position = [], start
    while position + piece_bytes < stop:
        cut = _NEXT_ASSET.search(content, position + piece_bytes, stop)
        if cut is None:
            break
        bounds.append((position, cut.start() + 1))
        position = cut.start(1)
    bounds.append((position, stop))
    return AssetPieces(source, content, bounds, header, workers) if len(bounds) > 1 else None
