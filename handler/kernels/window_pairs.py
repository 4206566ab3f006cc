"""The candidate pairs of GT boxes with the predictions of their windows, and their IoU, in C
(`src/window_pairs.c`)."""

from __future__ import annotations

import msgspec
import numpy as np
import numpy.typing as npt

from handler.kernels import DOUBLE, F64, I64, SIZE, kernel

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

# A table's boxes: xyxy, area, how many (`_boxes`).
_TABLE = (F64, F64, SIZE)
# The GT and predictions, the windows, `keep`, and where the pairs go.
_PAIRS = kernel(
    "window_pairs",
    *(*_TABLE, *_TABLE),
    *(I64, SIZE, I64, I64, F64, SIZE, SIZE, DOUBLE),
    *(I64, I64, F64, SIZE),
)


class Windows(msgspec.Struct, frozen=True):
    """The predictions in window order (position q is prediction row `rows[q]`), and per GT row its
    window (the `count` positions from `start`) and the y-overlap below which none of its pairs is
    kept; GT rows `first` to `last` (excluded) are enumerated."""

    rows: Ints
    start: Ints
    count: Ints
    min_height: Floats
    first: int
    last: int


def _boxes(xyxy: Floats, area: Floats) -> tuple[Floats, Floats, int]:
    if xyxy.shape != (len(area), 4):
        raise ValueError("a table's boxes are (n, 4) with an area each")
    return xyxy, area, len(area)


def window_pairs(
    gt: tuple[Floats, Floats], pred: tuple[Floats, Floats], windows: Windows, keep: float
) -> tuple[Ints, Ints, Floats]:
    """The pairs of the windows' GT rows whose y-overlap reaches the row's `min_height` and whose
    IoU (`engine/iou.py`'s, bit for bit) is at least `keep`, of boxes given as (xyxy, area): GT
    row, prediction position and IoU, in row then position order."""
    w = windows
    if not (len(w.start) == len(w.count) == len(w.min_height) == len(gt[1])):
        raise ValueError("the windows need a start, a count and a min_height per GT row")
    capacity = int(w.count[w.first : w.last].sum())
    out_g, out_position = np.empty(capacity, np.int64), np.empty(capacity, np.int64)
    out_iou = np.empty(capacity)
    written = _PAIRS(
        *(*_boxes(*gt), *_boxes(*pred)),
        *(w.rows, len(w.rows), w.start, w.count, w.min_height, w.first, w.last, keep),
        *(out_g, out_position, out_iou, capacity),
    )
    if written < 0:
        raise IndexError("a window leaves the predictions, or a row its table")
    return out_g[:written], out_position[:written], out_iou[:written]
