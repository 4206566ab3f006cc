"""A throwaway format for the tests that prove extending: one module's worth, registered on demand.

A folder of `.csv` files, one box a line: `asset,width,height,label,x_min,y_min,x_max,y_max`
and an optional `,confidence`, in pixels. It is written the way CONTRIBUTING.md "Extending → A new
format" says: the reader only parses into `ParsedRows` (NaN where a value is not a number, a
line it cannot split in `rejected`) and `build_dataset` applies every rule. `register(monkeypatch)`
adds it to the registry for one test, as the line in `reading.FORMATS` would.
"""

from __future__ import annotations

import numpy as np
import pytest

from handler.boxes import Images, ParsedRows
from handler.datasets import reading
from handler.datasets.builder import build_dataset
from handler.datasets.columns import float_column
from handler.datasets.folder import Folder
from handler.datasets.format import Format
from handler.datasets.loaded import Loaded
from handler.errors import DatasetError

SUFFIX = ".csv"
EXPECTED = "expected `asset,width,height,label,x_min,y_min,x_max,y_max[,confidence]`"
FIELDS = 8


def csv_line(asset: str, size: tuple[float, float], label: str, values: list[str]) -> str:
    """One line: `values` are the four corners and, optionally, the confidence, as text."""
    return ",".join([asset, f"{size[0]:g}", f"{size[1]:g}", label, *values]) + "\n"


def _number_column(lines: list[list[str]], field: int) -> np.ndarray:
    return float_column([_number(line[field]) if len(line) > field else None for line in lines])


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _positions(lines: list[list[str]], read: list[bool], field: int, order: list[str]) -> np.ndarray:
    """Each read line's `field` as a position in `order`; -1 for a line not read."""
    index = {value: position for position, value in enumerate(order)}
    return np.array(
        [index[line[field]] if ok else -1 for line, ok in zip(lines, read, strict=True)], dtype=np.int64
    )


def _read_csv(where: str, folder: Folder, _: Loaded | None) -> Loaded:
    files = folder.with_suffix(SUFFIX)
    if not files:
        raise DatasetError(f"{where}: no {SUFFIX} files: {EXPECTED} lines")
    lines = [line.split(",") for f in files for line in folder.text(f).splitlines() if line.strip()]
    read = [len(line) in (FIELDS, FIELDS + 1) and bool(line[3]) for line in lines]
    first: dict[str, int] = {}  # each asset's first line, which gives its size
    for row, line in enumerate(lines):
        if read[row]:
            first.setdefault(line[0], row)
    names = list(first)
    labels = list(dict.fromkeys(line[3] for line, ok in zip(lines, read, strict=True) if ok))
    rows = ParsedRows(
        xyxy=np.stack([_number_column(lines, field) for field in range(4, 8)], axis=1).reshape(-1, 4),
        class_id=np.array(
            [labels.index(line[3]) if ok else -1 for line, ok in zip(lines, read, strict=True)]
        ),
        image=np.array([names.index(line[0]) if ok else -1 for line, ok in zip(lines, read, strict=True)]),
        source_index=np.arange(len(lines)),
        position=lambda row: f"line {row + 1}",
        confidence=_number_column(lines, FIELDS),
        has_confidence=np.array([len(line) > FIELDS for line in lines], dtype=bool),
        rejected={row: EXPECTED for row, ok in enumerate(read) if not ok},
    )
    first_lines = [lines[row] for row in first.values()]
    images = Images(names, _number_column(first_lines, 1), _number_column(first_lines, 2))
    return Loaded(build_dataset(where, CSV.name, rows, images, labels))


CSV = Format("csv", "folder", lambda folder: bool(folder.with_suffix(SUFFIX)), _read_csv)


def register(monkeypatch: pytest.MonkeyPatch) -> Format:
    """The CSV format in the registry until the test ends (the one line a real format adds)."""
    monkeypatch.setattr(reading, "FORMATS", [*reading.FORMATS, CSV])
    return CSV
