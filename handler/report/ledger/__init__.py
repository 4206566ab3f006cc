"""The per-box ledger of a stored report, read as the user wants it.

The shards write it as column chunks (`handler.engine.ledger`, the report's `ledger` part); this
package adds the report's verdicts on each row (`table.outcome_table`) and prints the rows in a
format of `OUTCOME_FORMATS` (`prelabel-eval show ID --outcomes --format F`) or gives them as numpy
columns (`outcome_columns`, `handler.load_outcomes`). A new format is one module defining an
`OutcomeFormat` and one line in `OUTCOME_FORMATS`. Reports written before the ledger hold
`outcomes.jsonl` instead: they print as stored, as JSON Lines.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePath
from typing import Any, BinaryIO, Final

import numpy as np
import numpy.typing as npt

from handler.engine.ledger import read_ledger_chunk
from handler.errors import InputError, StorageError
from handler.report.json_lines import Field, Text
from handler.report.ledger.csv_text import CSV
from handler.report.ledger.formats import OutcomeFormat
from handler.report.ledger.jsonl import JSONL
from handler.report.ledger.parquet import PARQUET
from handler.report.ledger.table import COLUMNS, TABLE_VERSION, ReportVerdicts, Table, outcome_table
from handler.report.publish import (
    FINDINGS_PART,
    LEDGER,
    OUTCOMES,
    has_part,
    read_report_part,
    reading_part,
    report_chunks,
)
from handler.storage import Store

OUTCOME_FORMATS: Final[dict[str, OutcomeFormat]] = {fmt.name: fmt for fmt in (JSONL, CSV, PARQUET)}
Columns = dict[str, npt.NDArray[Any]]


def format_of_file(path: str, option: str) -> OutcomeFormat:
    """The format a file's suffix names (`.jsonl`, `.csv`, `.parquet`); an InputError naming them."""
    found = OUTCOME_FORMATS.get(PurePath(path).suffix.lstrip(".").lower())
    if found is None:
        suffixes = ", ".join(f".{name}" for name in OUTCOME_FORMATS)
        raise InputError(f"{option} {path}: the file's suffix names its format: expected {suffixes}")
    return found


def outcome_tables(store: Store, report_id: str) -> Iterator[Table]:
    """The ledger's rows chunk by chunk, each chunk read only when the one before is printed."""
    with reading_part(report_id, FINDINGS_PART):
        verdicts = ReportVerdicts.of_findings(read_report_part(store, report_id, FINDINGS_PART))
    for index, content in enumerate(report_chunks(store, report_id, LEDGER)):
        try:
            chunk = read_ledger_chunk(content)
        except ValueError as error:
            raise StorageError(f"report {report_id!r}: ledger chunk {index}: {error}") from None
        yield outcome_table(chunk, verdicts)


def write_outcomes(store: Store, report_id: str, fmt: OutcomeFormat, stream: BinaryIO) -> None:
    """Print a report's ledger in `fmt`; a report from before the ledger prints its JSON lines."""
    if has_part(store, report_id, LEDGER):
        fmt.write(outcome_tables(store, report_id), COLUMNS, stream)
        return
    if fmt is not JSONL:
        raise InputError(
            f"report {report_id!r} was stored before the ledger, with JSON lines only: use --format jsonl"
        )
    for content in report_chunks(store, report_id, OUTCOMES):
        stream.write(content)


def _numpy(column: Field) -> npt.NDArray[Any]:
    """A text column as an object array of str (None for none); a number column as stored, NaN
    for none in a float column (an index column holds -1 already)."""
    if isinstance(column, Text):
        values = np.empty(len(column.values) + 1, dtype=object)
        values[:-1] = list(column.values)
        found: npt.NDArray[Any] = values[column.index]  # -1 is the last entry: None
        return found
    if column.null is not None and column.values.dtype.kind == "f":
        return np.where(column.null, np.nan, column.values).astype(column.values.dtype)
    return np.asarray(column.values)


def outcome_columns(store: Store, report_id: str) -> Columns:
    """The ledger of a stored report as numpy columns, named and ordered as `COLUMNS` (docs/report.md,
    "The ledger"): text as object arrays of str (None for none), box indices -1 and floats NaN for
    none (`handler.load_outcomes` is the public face)."""
    parts: dict[str, list[npt.NDArray[Any]]] = {name: [] for name in COLUMNS}
    for table in outcome_tables(store, report_id):
        for name in COLUMNS:
            parts[name].append(_numpy(table[name]))
    return {name: np.concatenate(arrays) if arrays else np.empty(0) for name, arrays in parts.items()}


__all__ = [
    "COLUMNS",
    "OUTCOME_FORMATS",
    "TABLE_VERSION",
    "OutcomeFormat",
    "format_of_file",
    "outcome_columns",
    "write_outcomes",
]
