"""JSON arrays of COCO-shaped objects read into columns in C (`src/json_records.c`), and the
members of a top-level object found by their bounds, no Python object made per record."""

from __future__ import annotations

from typing import Final

import msgspec
import numpy as np
import numpy.typing as npt
from msgspec.structs import astuple

from handler.kernels import F64, I64, SIZE, U8, kernel

# The flags of `Records.written`: which keys a record wrote.
HAS_SCORE: Final = 1
HAS_CROWD: Final = 2
HAS_SEGMENTATION: Final = 4
# The shortest record the kernel reads, `{"image_id":0,"category_id":0}` and its comma: room for
# a text's records is its length over this.
_SHORTEST_RECORD: Final = 31
# Members of a top-level object looked for at most (a COCO file has five or so).
_MEMBERS_ROOM: Final = 64

_RECORDS = kernel("json_records", U8, SIZE, SIZE, I64, I64, F64, F64, I64, I64, U8)
_MEMBERS = kernel("json_members", U8, SIZE, SIZE, I64)
_JOIN_SPANS = kernel("json_join_spans", U8, SIZE, I64, SIZE, U8, SIZE, I64)


class Records(msgspec.Struct, frozen=True):
    """The columns of an array's records: ids, `[x, y, w, h]` (NaN where no bbox), score (NaN
    where none), iscrowd (0 where none), the bounds of each `segmentation` value in the text
    ((0, 0) where none) and the `HAS_*` flags of the keys each wrote."""

    image_id: npt.NDArray[np.int64]
    category_id: npt.NDArray[np.int64]
    xywh: npt.NDArray[np.float64]
    score: npt.NDArray[np.float64]
    iscrowd: npt.NDArray[np.int64]
    segmentation: npt.NDArray[np.int64]
    written: npt.NDArray[np.uint8]

    def __len__(self) -> int:
        return len(self.image_id)


class Refused(msgspec.Struct, frozen=True):
    """The kernel does not read the text: its record `record` is not JSON or not of the usual
    shape (a text id, another type, a number it leaves to the plain parser)."""

    record: int


def records(text: bytes) -> Records | Refused:
    """The records of `text`, a JSON array of objects with integer `image_id` and `category_id`,
    a `bbox` of four numbers or none, a number `score`, an integer `iscrowd`, any `segmentation`
    and any other keys; `Refused` for anything else."""
    room = len(text) // _SHORTEST_RECORD + 1
    columns = Records(
        np.empty(room, np.int64),
        np.empty(room, np.int64),
        np.empty((room, 4), np.float64),
        np.empty(room, np.float64),
        np.empty(room, np.int64),
        np.empty((room, 2), np.int64),
        np.empty(room, np.uint8),
    )
    chars = np.frombuffer(text, np.uint8)
    count = _RECORDS(chars, len(chars), room, *astuple(columns))
    if count < 0:
        return Refused(-1 - count)
    return Records(*(column[:count] for column in astuple(columns)))


def members(text: bytes) -> list[tuple[slice, slice]] | None:
    """The (key, value) bounds of each member of the JSON object `text` (a key with its quotes),
    in order; None when the text is not one valid object (or has very many members)."""
    bounds = np.empty(4 * _MEMBERS_ROOM, np.int64)
    chars = np.frombuffer(text, np.uint8)
    count = _MEMBERS(chars, len(chars), _MEMBERS_ROOM, bounds)
    if count < 0:
        return None
    found = bounds[: 4 * count].reshape(count, 4).tolist()
    return [(slice(key, key_end), slice(value, value_end)) for key, key_end, value, value_end in found]


def joined_spans(text: bytes, bounds: npt.NDArray[np.int64]) -> tuple[bytes, npt.NDArray[np.int64]]:
    """The spans `text[start:end]` of `bounds` ((n, 2); (-1, -1): `null`) one after the other,
    and where each lies in the result."""
    bounds = np.ascontiguousarray(bounds, dtype=np.int64)
    valid = (bounds[:, 0] >= 0) & (bounds[:, 0] < bounds[:, 1]) & (bounds[:, 1] <= len(text))
    room = int(np.where(valid, bounds[:, 1] - bounds[:, 0], len(b"null")).sum())
    joined = np.empty(room, np.uint8)
    placed = np.empty_like(bounds)
    chars = np.frombuffer(text, np.uint8)
    written = _JOIN_SPANS(chars, len(chars), bounds, len(bounds), joined, room, placed)
    if written != room:
        raise AssertionError(f"the spans took {written} bytes, not {room}")
    return joined.tobytes(), placed
