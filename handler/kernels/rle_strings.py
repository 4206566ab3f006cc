"""COCO's compressed RLE strings decoded in C (`src/rle_strings.c`)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from handler.kernels import I64, SIZE, U8, U32, kernel

_DECODE = kernel("rle_decode_strings", U8, SIZE, I64, SIZE, U32, I64, U8)


def decoded(
    text: bytes | npt.NDArray[np.uint8], bounds: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """The runs of the strings `text[bounds[i]:bounds[i + 1]]`: all their runs, each string's
    offsets into them, and whether it could be read (one that could not has no runs). The runs
    are a view of room for a run per character: a caller keeping them, not narrowing them at once
    (`run_store.narrowed`), copies them."""
    n = len(bounds) - 1
    chars = np.frombuffer(text, dtype=np.uint8)
    counts = np.empty(len(chars), dtype=np.uint32)
    lengths = np.empty(n, dtype=np.int64)
    readable = np.empty(n, dtype=np.uint8)
    bounds = np.ascontiguousarray(bounds, dtype=np.int64)
    written = _DECODE(chars, len(chars), bounds, n, counts, lengths, readable)
    if written < 0:
        raise ValueError(f"the strings' bounds do not lie in order within the {len(chars)} characters")
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return counts[:written], offsets, readable.view(np.bool_)
