"""The candidate pairs of GT boxes with the predictions of their windows, and their IoU, in C
(`src/window_pairs.c`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from handler.kernels import DOUBLE, POINTER, SIZE, address, kernel

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Windows:
    """The predictions in window order (position q is prediction row `rows[q]`), and per GT row its
    window (the `count` positions from `start`) and the y-overlap below which none of its pairs is
    kept; GT rows `first` to `last` (excluded) are enumerated."""

    rows: Ints
    start: Ints
    count: Ints
    min_height: Floats
    first: int
    last: int


def _boxes(xyxy: Floats, area: Floats) -> tuple[int, int, int]:
    if xyxy.shape != (len(area), 4):
        raise ValueError("a table's boxes are (n, 4) with an area each")
    return address(xyxy, np.float64), address(area, np.float64), len(area)


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
    table = (POINTER, POINTER, SIZE)
    pairs = kernel(
        "window_pairs",
        *table,
        *table,
        POINTER,
        SIZE,
        *[POINTER] * 3,
        SIZE,
        SIZE,
        DOUBLE,
        *table[:2],
        POINTER,
        SIZE,
    )
    written = pairs(
        *_boxes(*gt),
        *_boxes(*pred),
        address(w.rows, np.int64),
        len(w.rows),
        address(w.start, np.int64),
        address(w.count, np.int64),
        address(w.min_height, np.float64),
        w.first,
        w.last,
        keep,
        address(out_g, np.int64) if capacity else None,
        address(out_position, np.int64) if capacity else None,
        address(out_iou, np.float64) if capacity else None,
        capacity,
    )
    if written < 0:
        raise IndexError("a window leaves the predictions, or a row its table")
    return out_g[:written], out_position[:written], out_iou[:written]
