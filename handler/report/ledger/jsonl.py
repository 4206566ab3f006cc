"""The ledger as JSON Lines: an object per row, keys in the ledger's column order, null for none."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import BinaryIO

import numpy as np

from handler.report.json_lines import json_lines, rows_of
from handler.report.ledger.formats import OutcomeFormat
from handler.report.ledger.table import Table


def write_jsonl(tables: Iterable[Table], columns: Sequence[str], stream: BinaryIO) -> None:
    for table in tables:
        rows = rows_of(table[columns[0]])
        stream.write(json_lines({name: table[name] for name in columns}, np.arange(rows)))


JSONL = OutcomeFormat("jsonl", write_jsonl, "a JSON object per line (the default)")
