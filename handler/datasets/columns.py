"""Turn lists of parsed JSON values into numpy columns, marking the values that are not numbers."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from handler.boxes import BoolArray, FloatArray


def number_or_nan(value: Any) -> float:
    """The value as a float if it is a JSON number (not a bool), else NaN."""
    return float(value) if type(value) in (int, float) else math.nan


def float_column(values: Sequence[Any]) -> FloatArray:
    """A float64 column; anything that is not a number becomes NaN."""
    try:
        column = np.array(values, dtype=np.float64)
        if column.shape == (len(values),):
            return column
    except (TypeError, ValueError):
        pass
    return np.array([number_or_nan(v) for v in values], dtype=np.float64)


_ALL_TRUE = int.from_bytes(bytes([1, 1, 1, 1]), "little")  # four True bytes, in either byte order


def finite_rows(xyxy: FloatArray) -> BoolArray:
    """Rows of an (N, 4) array whose four values are all finite.

    The four flags of a row, one byte each, read as one 32-bit word: numpy's reduction along a
    short axis (`.all(axis=1)`) is far slower."""
    flags = np.ascontiguousarray(np.isfinite(xyxy)).view(np.uint32).reshape(len(xyxy))
    finite: BoolArray = flags == _ALL_TRUE
    return finite


def bad_box_rows(xyxy: FloatArray) -> BoolArray:
    """Rows that are not a real box: a coordinate that is not finite, or max < min."""
    finite = finite_rows(xyxy)
    with np.errstate(invalid="ignore"):
        ordered = (xyxy[:, 2] >= xyxy[:, 0]) & (xyxy[:, 3] >= xyxy[:, 1])
    return ~(finite & ordered)


NEGATIVE_SIZE = "negative width or height"


def box_problem(xyxy: Sequence[float], sized: bool = False) -> str:
    """Why one row was flagged by `bad_box_rows`, in words; in width and height terms for a
    box written with a size (its max < min is a negative size, not swapped corners)."""
    if sized:
        finite = all(math.isfinite(v) for v in xyxy)
        return NEGATIVE_SIZE if finite else "a box value is not a finite number"
    names = ("x_min", "y_min", "x_max", "y_max")
    for name, value in zip(names, xyxy, strict=True):
        if not math.isfinite(value):
            return f"{name} is not a finite number"
    if xyxy[2] < xyxy[0]:
        return "x_max < x_min"
    return "y_max < y_min"
