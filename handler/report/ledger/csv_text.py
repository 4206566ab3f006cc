"""The ledger as CSV: a header of the column names, then a row per outcome; an empty field is
none (no partner box, no prediction's confidence), text is quoted where CSV needs it."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from typing import BinaryIO

from handler.report.exports.columns_text import Piece, numbers, rows, texts
from handler.report.json_lines import Number, Text, rows_of
from handler.report.ledger.formats import OutcomeFormat
from handler.report.ledger.table import Table


def _quoted(value: str | None) -> bytes:
    """One CSV field as the csv module writes it (quoted only where it has to be); None is empty."""
    if value is None:
        return b""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow([value])
    return buffer.getvalue().encode("utf-8")


def _field(column: Text | Number) -> Piece:
    if isinstance(column, Text):
        return texts([*column.values, None], column.index, _quoted)  # -1, the last entry: empty
    written = numbers(column.values)
    written[written == b"null"] = b""
    if column.null is not None:
        written[column.null] = b""
    return written


def write_csv(tables: Iterable[Table], columns: Sequence[str], stream: BinaryIO) -> None:
    stream.write(",".join(columns).encode("ascii") + b"\n")
    for table in tables:
        count = rows_of(table[columns[0]])
        pieces: list[Piece] = []
        for name in columns:
            pieces.extend((_field(table[name]), b","))
        lines = rows(count, *pieces[:-1])
        if count:
            stream.write(b"\n".join(lines.tolist()) + b"\n")


CSV = OutcomeFormat("csv", write_csv, "comma-separated values with a header row")
