"""Masks' runs stored in 16 bits and read back merged, in C (`src/run_store.c`): a run longer than
`RUN_MAX` is stored as pieces with an empty run of the other value between two of them, so that
every mask covers the pixels it did (each run's parity, 0s or 1s, is its place in its mask)."""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from handler.kernels import I64, SIZE, U16, U32, kernel

RUN_MAX: Final = 0xFFFF
Offsets = npt.NDArray[np.int64]

_ROOM = kernel("runs_narrowed_room", U32, SIZE)
_NARROWED = kernel("runs_narrowed", U32, SIZE, I64, SIZE, U16, SIZE, I64)
_MERGED = kernel("runs_merged", U16, SIZE, I64, SIZE, I64, I64)


def _checked(status: int) -> int:
    if status < 0:
        raise ValueError(f"mask {-1 - status}'s runs are outside the runs given")
    return status


def narrowed(counts: npt.NDArray[np.uint32], offsets: Offsets) -> tuple[npt.NDArray[np.uint16], Offsets]:
    """The masks' runs (mask i's `counts[offsets[i]:offsets[i + 1]]`) as 16-bit runs, and their
    offsets: a run longer than `RUN_MAX` as its remainder, then (0, `RUN_MAX`) pairs."""
    counts = np.ascontiguousarray(counts, dtype=np.uint32)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    n = len(offsets) - 1
    out = np.empty(_ROOM(counts, len(counts)), dtype=np.uint16)
    new_offsets = np.empty(n + 1, dtype=np.int64)
    written = _checked(_NARROWED(counts, len(counts), offsets, n, out, len(out), new_offsets))
    return out[:written], new_offsets


def merged(counts: npt.NDArray[np.uint16], offsets: Offsets) -> tuple[npt.NDArray[np.int64], Offsets]:
    """The masks' runs with the empty runs after each mask's first folded into the run before
    them (the runs pycocotools writes for the same pixels), and their offsets."""
    counts = np.ascontiguousarray(counts, dtype=np.uint16)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    n = len(offsets) - 1
    out = np.empty(len(counts), dtype=np.int64)
    new_offsets = np.empty(n + 1, dtype=np.int64)
    written = _checked(_MERGED(counts, len(counts), offsets, n, out, new_offsets))
    return out[:written], new_offsets
