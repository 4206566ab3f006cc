"""How box rows are printed (the ledger by `show --outcomes`, the transitions by `compare
--transitions`): a format is a name and a function that writes the tables (a chunk's rows each,
in order) with the columns named to a binary stream, one table at a time, so the printing holds
one chunk's text and never the whole ledger."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import BinaryIO

import msgspec

from handler.report.ledger.table import Table

TableWriter = Callable[[Iterable[Table], Sequence[str], BinaryIO], None]


class OutcomeFormat(msgspec.Struct, frozen=True):
    """One way to print box rows, named as its file suffix; `binary` ones are not printed to a terminal."""

    name: str
    write: TableWriter
    help: str
    binary: bool = False
