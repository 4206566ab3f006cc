"""The ledger as JSON Lines: an object per row, keys in the ledger's column order, null for none."""

from __future__ import annotations

from collections.abc import Iterable
from typing import BinaryIO

import numpy as np

from handler.report.json_lines import json_lines, rows_of
from handler.report.ledger.formats import OutcomeFormat
from handler.report.ledger.table import Table


def write_jsonl(tables: Iterable[Table], stream: BinaryIO) -> None:
    for table in tables:
        rows = rows_of(table["outcome"])
        stream.write(json_lines(table, np.arange(rows)))


JSONL = OutcomeFormat("jsonl", write_jsonl, "a JSON object per line (the default)")
