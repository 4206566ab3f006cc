"""How `prelabel-eval show --outcomes` prints the ledger: a format is a name and a function that
writes the tables (a chunk's rows each, in order) to a binary stream, one chunk at a time, so
the printing holds one chunk's text and never the whole ledger."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import BinaryIO

from handler.report.ledger.table import Table

TableWriter = Callable[[Iterable[Table], BinaryIO], None]


@dataclass(frozen=True)
class OutcomeFormat:
    """One way to print the ledger; `binary` ones are not printed to a terminal."""

    name: str
    write: TableWriter
    help: str
    binary: bool = False
