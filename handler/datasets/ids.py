"""A dataset's own ids for its images and classes, and their lookup.

Some files name images and classes by ids that only the file they are paired with defines
(a COCO results list names the `id`s of its COCO GT file). The GT's reader keeps its ids as
`DatasetIds`, in no format's terms, so that such a file can be joined to it.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, Final

import msgspec
import numpy as np

from handler.boxes import IntArray, SourceIds

# Integer ids below this (or below 8x the number of ids) are looked up in a table.
MAX_ID_TABLE: Final = 1 << 20


def _canonical_int(text: str) -> int | None:
    """The integer whose `str` is exactly `text` and that fits in int64, else None."""
    try:
        number = int(text)
    except ValueError:
        return None
    return number if str(number) == text and -(2**63) <= number < 2**63 else None


class IdIndex(msgspec.Struct, frozen=True):
    """Ids (compared as text, as `str(value)`) → position.

    Integer values are looked up in a table indexed by the id: `str(n)` equals an id's text
    only when that text is n's canonical form, so only those ids are in the table.
    """

    by_text: dict[str, int]
    table: IntArray  # table[n] = position of id n, -1 if none

    @classmethod
    def of(cls, ids: list[str]) -> IdIndex:
        by_text = {key: position for position, key in enumerate(ids)}
        numbers = {number: p for key, p in by_text.items() if (number := _canonical_int(key)) is not None}
        top = max(numbers, default=-1)
        if min(numbers, default=0) < 0 or top >= max(MAX_ID_TABLE, 8 * len(ids)):
            return cls(by_text, np.empty(0, dtype=np.int64))
        table = np.full(top + 1, -1, dtype=np.int64)
        table[list(numbers)] = list(numbers.values())
        return cls(by_text, table)

    def lookup(self, values: list[Any] | IntArray) -> IntArray:
        """Position of every value's id, -1 if unknown; `values` may be a column of integers."""
        if isinstance(values, np.ndarray):
            return self._in_table(values) if len(self.table) else self._by_text(values.tolist())
        if len(self.table) and set(map(type, values)) <= {int}:
            try:
                keys = np.fromiter(values, dtype=np.int64, count=len(values))
            except OverflowError:
                pass
            else:
                return self._in_table(keys)
        return self._by_text(values)

    def _in_table(self, keys: IntArray) -> IntArray:
        known = (keys >= 0) & (keys < len(self.table))
        return np.where(known, self.table[np.where(known, keys, 0)], -1)

    def _by_text(self, values: list[Any]) -> IntArray:
        return np.array([self.by_text.get(str(v), -1) for v in values], dtype=np.int64)


class DatasetIds(SourceIds, frozen=True, dict=True):
    """A file's own ids (as text), aligned with its dataset's `asset_ids` and `class_names`, and
    indexed, for a paired file that names them."""

    @cached_property
    def image_index(self) -> IdIndex:
        return IdIndex.of(self.image_ids)

    @cached_property
    def class_index(self) -> IdIndex:
        return IdIndex.of(self.class_ids)


# Other keys a results list may name its images by, tried when its ids join less than half of its
# rows: what a YOLO validator writes for file names that are not numbers (the stem), a script that
# wrote the file name, or the image's place in the list (from 0 or 1).
JOIN_SHARE_MIN: Final = 0.5
JOINED_SHARE_MIN: Final = 0.99
# A place in the list names some image whatever the file was made for: joined so only when the
# rows name nearly every image (a results list of these images), never a few of them.
PLACES_COVER_MIN: Final = 0.9
BY_PLACE: Final = "place in the image list"


def _stem(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[0] if "." in base else base


def other_joins(ids: DatasetIds, asset_ids: list[str]) -> list[tuple[str, DatasetIds]]:
    """Each other way to join image ids, one-to-one (keys that collide rule a way out)."""
    ways = {
        "file name": asset_ids,
        "file stem": [_stem(name) for name in asset_ids],
        f"{BY_PLACE}, from 0": [str(i) for i in range(len(asset_ids))],
        f"{BY_PLACE}, from 1": [str(i + 1) for i in range(len(asset_ids))],
    }
    return [
        (way, DatasetIds(keys, ids.class_ids))
        for way, keys in ways.items()
        if len(set(keys)) == len(keys) and keys != ids.image_ids
    ]
