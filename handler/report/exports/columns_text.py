"""Text from columns, for the exporters: one piece of text per box built by numpy over whole
columns (orjson writes a numeric column at once; a text column is a lookup into its few distinct
encoded values), then the pieces joined image by image. No loop runs per box.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from functools import reduce
from operator import add

import numpy as np

from handler.boxes import FloatArray, IntArray
from handler.engine.outcome_lines import ObjectArray, number_texts

Piece = ObjectArray | bytes


def numbers(values: IntArray | FloatArray) -> ObjectArray:
    """The JSON text of each value (also valid in an XML attribute)."""
    return number_texts(values)


def texts(values: Sequence[str], index: IntArray, encode: Callable[[str], bytes]) -> ObjectArray:
    """`encode(values[i])` for each i of `index`: each distinct value encoded once."""
    table = np.empty(len(values), dtype=object)
    table[:] = [encode(value) for value in values]
    found: ObjectArray = table[index]
    return found


def rows(count: int, *pieces: Piece) -> ObjectArray:
    """Each row's pieces concatenated (a `bytes` piece is the same in every row)."""
    start = np.empty(count, dtype=object)
    start[:] = [b""] * count
    joined: ObjectArray = reduce(add, pieces, start)
    return joined


def by_image(texts_of_rows: ObjectArray, image: IntArray, images: int, separator: bytes) -> list[bytes]:
    """Per image, the texts of its rows joined by `separator` (`image` ascends)."""
    bounds = np.searchsorted(image, np.arange(images + 1)).tolist()
    flat = texts_of_rows.tolist()
    return [separator.join(flat[start:stop]) for start, stop in itertools.pairwise(bounds)]
