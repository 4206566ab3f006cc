"""Rows of a ragged column gathered in C (`src/ragged.c`): each row's items copied as one block,
with no position computed per item."""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import numpy.typing as npt

from handler.kernels import I64, SIZE, U8, kernel

Item = TypeVar("Item", bound=np.generic)
Offsets = npt.NDArray[np.int64]

_GATHER = kernel("ragged_gather", U8, SIZE, SIZE, I64, SIZE, I64, SIZE, U8, SIZE)


def gathered(items: npt.NDArray[Item], offsets: Offsets, rows: Offsets) -> tuple[npt.NDArray[Item], Offsets]:
    """The items of rows `rows` (in range, checked by their indexing here) of a column whose row r
    is `items[offsets[r]:offsets[r + 1]]` (a row of `items` is an item: a point of (P, 2)
    points), one row after the other, and the new rows' offsets."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    lengths = offsets[1:][rows] - offsets[:-1][rows]
    new_offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_offsets[1:])
    source = np.ascontiguousarray(items)
    out: npt.NDArray[Item] = np.empty((int(new_offsets[-1]), *source.shape[1:]), dtype=source.dtype)
    if len(out):
        bytes_of = source.dtype.itemsize * int(np.prod(source.shape[1:], dtype=np.int64))
        written = _GATHER(
            source.reshape(-1).view(np.uint8),
            bytes_of,
            len(source),
            offsets,
            len(offsets) - 1,
            rows,
            len(rows),
            out.reshape(-1).view(np.uint8),
            len(out),
        )
        if written != len(out):
            raise ValueError("Expected offsets ascending within the column's items")
    return out, new_offsets
