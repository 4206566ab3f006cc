"""Text from columns, for the exporters: one piece of text per box built by numpy over whole
columns (orjson writes a numeric column at once; a text column is a lookup into its few distinct
encoded values), then the pieces joined image by image. No loop runs per box.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Final, TypeVar

import numpy as np

from handler.boxes import BoolArray, FloatArray, IntArray
from handler.report.json_lines import CHUNK_LINES, ObjectArray, number_texts

Piece = ObjectArray | bytes
ROW_END: Final = b"\0"
T = TypeVar("T")


def numbers(values: IntArray | FloatArray | BoolArray) -> ObjectArray:
    """The JSON text of each value (also valid in an XML attribute)."""
    return number_texts(values)


def texts(values: Sequence[T], index: IntArray, encode: Callable[[T], bytes]) -> ObjectArray:
    """`encode(values[i])` for each i of `index`: each distinct value encoded once."""
    table = np.empty(len(values), dtype=object)
    table[:] = [encode(value) for value in values]
    found: ObjectArray = table[index]
    return found


def _block(pieces: Sequence[Piece], rows_of: slice, count: int) -> list[bytes]:
    grid = np.empty((count, len(pieces) + 1), dtype=object)
    for column, piece in enumerate(pieces):
        grid[:, column] = piece if isinstance(piece, bytes) else piece[rows_of]
    grid[:, -1] = ROW_END
    cut = b"".join(grid.ravel().tolist()).split(ROW_END)[:-1]
    if len(cut) != count:
        raise ValueError("Expected text pieces without a NUL byte but got one")
    return cut


def rows(count: int, *pieces: Piece) -> ObjectArray:
    """Each row's pieces concatenated (a `bytes` piece is the same in every row): the pieces laid
    out row by row, joined once, and cut at a NUL byte after each row (no JSON or XML text holds
    one; a piece that did would cut a row short, and is refused). CHUNK_LINES rows at a time, so
    the pieces in flight stay few."""
    joined = np.empty(count, dtype=object)
    for start in range(0, count, CHUNK_LINES):
        stop = min(start + CHUNK_LINES, count)
        joined[start:stop] = _block(pieces, slice(start, stop), stop - start)
    return joined


def by_image(texts_of_rows: ObjectArray, image: IntArray, images: int, separator: bytes) -> list[bytes]:
    """Per image, the texts of its rows joined by `separator` (`image` ascends)."""
    bounds = np.searchsorted(image, np.arange(images + 1)).tolist()
    flat = texts_of_rows.tolist()
    return [separator.join(flat[start:stop]) for start, stop in itertools.pairwise(bounds)]


def joined_by_row(texts_of_items: ObjectArray, row: IntArray, count: int, separator: bytes) -> ObjectArray:
    """Per row of `count`, the texts of its items (a polygon's points, a mask's runs) joined by
    `separator`, as a column for `rows` (`row` ascends)."""
    joined = np.empty(count, dtype=object)
    joined[:] = by_image(texts_of_items, row, count, separator)
    return joined
