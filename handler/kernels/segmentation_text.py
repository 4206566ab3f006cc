"""COCO's `segmentation` values read from their JSON text in C (`src/segmentation_text.c`): every
row at once into columns, no value parsed into Python objects."""

from __future__ import annotations

from typing import Final

import msgspec
import numpy as np
import numpy.typing as npt

from handler.kernels import F64, I64, SIZE, U8, U32, kernel

# What a row holds (`kinds`), the codes of the C source.
NO_MASK: Final = 0  # null, [], {}, or a value neither a list nor an object
POLYGONS: Final = 1
RLE_STRING: Final = 2
RLE_RUNS: Final = 3
BAD_POLYGONS: Final = 4  # a list that is not lists of at least 3 x, y pairs of finite numbers
BAD_RLE: Final = 5  # an object without a size of two positive integers, or counts of no RLE
RUNS_OUT_OF_RANGE: Final = 6  # a run below 0 or beyond 32 bits
NO_SIZE: Final = 7  # polygons on an image of unknown size

Ints = npt.NDArray[np.int64]

# The text, the rows' bounds and images, the columns of `Segmentations`, their room and use.
_SCAN = kernel(
    "segmentation_scan",
    *(U8, I64, I64, SIZE, F64, F64),
    *(U8, I64, I64, I64, I64, F64, I64, U8, U32),
    *(I64, I64),
)
_ROOMS = kernel("segmentation_rooms", U8, SIZE, SIZE, I64, returns=None)


class Segmentations(msgspec.Struct, frozen=True):
    """N rows' values as columns. Row i's parts are `row_parts[i]` of `part_lengths` (numbers of
    `points`, x y x y …), its RLE size `sizes[i]` (height, width), its compressed string
    `string_lengths[i]` bytes of `strings` (unescaped) or its runs `run_lengths[i]` of `runs`:
    each column holds its rows one after the other, only rows of their kind write any."""

    kinds: npt.NDArray[np.uint8]
    sizes: Ints
    row_parts: Ints
    part_lengths: Ints
    points: npt.NDArray[np.float64]
    string_lengths: Ints
    strings: npt.NDArray[np.uint8]
    run_lengths: Ints
    runs: npt.NDArray[np.uint32]


def scanned(
    text: bytes, starts: Ints, ends: Ints, height: npt.NDArray[np.float64], width: npt.NDArray[np.float64]
) -> Segmentations:
    """The values `text[starts[i]:ends[i]]` (JSON, each a whole value) on images of `height` x
    `width` (NaN: unknown), read."""
    n = len(starts)
    starts, ends = (np.ascontiguousarray(a, dtype=np.int64) for a in (starts, ends))
    if n and (starts.min() < 0 or ends.max() > len(text) or bool((ends < starts).any())):
        raise ValueError(f"Expected rows within the text's {len(text)} bytes")
    height, width = (np.ascontiguousarray(a, dtype=np.float64) for a in (height, width))
    if len(height) != n or len(width) != n:
        raise ValueError(f"Expected {n} heights and widths, got {len(height)} and {len(width)}")
    chars = np.frombuffer(text, dtype=np.uint8)
    room = _rooms(chars, int(starts.min()) if n else 0, int(ends.max()) if n else 0)
    used = np.zeros(4, dtype=np.int64)
    kinds = np.empty(n, dtype=np.uint8)
    sizes = np.empty((n, 2), dtype=np.int64)
    row_parts, string_lengths, run_lengths = (np.empty(n, dtype=np.int64) for _ in range(3))
    points = np.empty(room[0], dtype=np.float64)
    part_lengths = np.empty(room[1], dtype=np.int64)
    strings = np.empty(room[2], dtype=np.uint8)
    runs = np.empty(room[3], dtype=np.uint32)
    failed = _SCAN(
        chars,
        *(starts, ends, n, height, width),
        *(kinds, sizes, row_parts, string_lengths, run_lengths, points, part_lengths, strings, runs),
        *(room, used),
    )
    if failed == -2:
        raise MemoryError("no memory for a number's text")
    if failed:
        raise RuntimeError("a segmentation column outgrew the room made for it")
    return Segmentations(
        kinds,
        sizes,
        row_parts,
        part_lengths[: used[1]],
        points[: used[0]],
        string_lengths,
        strings[: used[2]],
        run_lengths,
        runs[: used[3]],
    )


def _rooms(chars: npt.NDArray[np.uint8], first: int, last: int) -> Ints:
    """Room for the numbers, parts, string bytes and runs of rows within `chars[first:last]`: each
    number is followed by a ',' or ends a list, which opened with a '['; a string is no longer
    unescaped. None outgrows it (untouched, an array's room takes no memory)."""
    counts = np.zeros(2, dtype=np.int64)
    _ROOMS(chars, first, last, counts)
    commas, lists = counts.tolist()
    return np.array([commas + lists, lists, last - first, commas + lists], dtype=np.int64)
