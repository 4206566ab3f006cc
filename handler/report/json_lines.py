"""JSON text from columns: one JSON object per row (the ledger's lines) or one value per row
(the exporters' pieces), built per column, not per row: orjson writes each numeric column at once,
text columns are looked up from their few distinct encoded values, and one `bytes.join`
interleaves the columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import msgspec
import numpy as np
import numpy.typing as npt
import orjson

from handler.boxes import BoolArray, FloatArray, IntArray

ObjectArray = npt.NDArray[np.object_]
# Lines encoded at once: the per-line objects of a chunk are all that is held; a bigger chunk
# holds more and is no faster.
CHUNK_LINES: Final = 20_000
# Adjacent text fields whose tables have at most this many pairs of entries are one piece of a
# line (both classes; the outcome, its action and the suspicion): fewer, longer pieces to join.
TABLE_ENTRIES: Final = 1 << 16
LINE_END: Final = b"}\n"


class Text(msgspec.Struct, frozen=True):
    """A text field: `values[index]`, null where index is -1."""

    values: Sequence[str]
    index: IntArray


class Number(msgspec.Struct, frozen=True):
    """A numeric field: null where `null` is set (NaN floats are null anyway)."""

    values: IntArray | FloatArray | BoolArray
    null: BoolArray | None = None


Field = Text | Number


def rows_of(field: Field) -> int:
    return len(field.index) if isinstance(field, Text) else len(field.values)


def _objects(items: Sequence[bytes]) -> ObjectArray:
    array = np.empty(len(items), dtype=object)
    array[:] = items
    return array


class _Encoded(msgspec.Struct, frozen=True):
    """Text fields as a table of their `"key":value` pieces, encoded once for every chunk, and the
    entry of each line."""

    table: ObjectArray
    index: IntArray

    @classmethod
    def of(cls, prefix: bytes, field: Text) -> _Encoded:
        pieces = [prefix + orjson.dumps(value) for value in field.values] + [prefix + b"null"]
        return cls(_objects(pieces), field.index % len(pieces))  # index -1 is the last entry: null

    def then(self, other: _Encoded) -> _Encoded:
        """This field and the next as one: a table of every pair of their entries."""
        return _Encoded(
            np.add.outer(self.table, other.table).ravel(), self.index * len(other.table) + other.index
        )

    def closed(self) -> _Encoded:
        """The last field, with the line's end in every entry."""
        return _Encoded(_objects([entry + LINE_END for entry in self.table.tolist()]), self.index)


Part = _Encoded | tuple[bytes, Number]


def number_texts(values: IntArray | FloatArray | BoolArray, prefix: bytes = b"") -> ObjectArray:
    """`prefix` and the JSON text of each value: orjson writes the values at once, and the prefix
    goes before each one by turning every separating comma into a newline (no number holds one)
    and the prefix. NaN is `null`."""
    if not len(values):
        return _objects([])
    encoded = orjson.dumps(np.ascontiguousarray(values), option=orjson.OPT_SERIALIZE_NUMPY)[1:-1]
    return _objects((prefix + encoded.replace(b",", b"\n" + prefix)).split(b"\n"))


def _number_column(prefix: bytes, field: Number, lines: IntArray) -> ObjectArray:
    """`"key":value` of each line (`number_texts`)."""
    column = number_texts(field.values[lines], prefix)
    if field.null is not None:
        column[field.null[lines]] = prefix + b"null"
    return column


def _chunk_lines(parts: list[Part], end: bytes, lines: IntArray) -> bytes:
    """The lines `lines` (indices into the fields' columns), in that order: one piece per part."""
    pieces: list[ObjectArray | bytes] = [
        part.table[part.index[lines]] if isinstance(part, _Encoded) else _number_column(*part, lines)
        for part in parts
    ]
    if end:
        pieces.append(end)
    grid = np.empty((len(lines), len(pieces)), dtype=object)
    for column, piece in enumerate(pieces):
        grid[:, column] = piece
    return b"".join(grid.ravel().tolist())


def _parts(fields: dict[str, Field]) -> list[Part]:
    """A part per field, but adjacent text fields with small tables as one (fewer pieces to join)."""
    parts: list[Part] = []
    for position, (key, field) in enumerate(fields.items()):
        prefix = (b"," if position else b"{") + orjson.dumps(key) + b":"
        part = _Encoded.of(prefix, field) if isinstance(field, Text) else (prefix, field)
        last = parts[-1] if parts else None
        if (
            isinstance(part, _Encoded)
            and isinstance(last, _Encoded)
            and len(last.table) * len(part.table) <= TABLE_ENTRIES
        ):
            parts[-1] = last.then(part)
        else:
            parts.append(part)
    return parts


def json_lines(fields: dict[str, Field], order: IntArray) -> bytes:
    """One JSON object per line with these keys in this order, the lines of `order` (indices into
    the fields' columns) in that order; without a loop per line, CHUNK_LINES lines at a time."""
    parts = _parts(fields)
    end = LINE_END
    if parts and isinstance(parts[-1], _Encoded):
        parts[-1], end = parts[-1].closed(), b""
    return b"".join(
        _chunk_lines(parts, end, order[start : start + CHUNK_LINES])
        for start in range(0, len(order), CHUNK_LINES)
    )
