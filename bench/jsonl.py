"""Native JSONL shards written from columns with numpy alone: no Python loop over boxes.

Every field has a fixed width (numbers padded with spaces on the left, which JSON allows
between tokens; ids zero-padded inside their string), so an asset's header and each of its
annotations is a fixed-width byte row, and a shard is those rows scattered into one buffer
at offsets computed from the per-asset box counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
_DIGIT_ZERO: Final = ord("0")
_SPACE: Final = ord(" ")


@dataclass(frozen=True)
class Field:
    """A non-negative integer column printed in `digits` digits, the last `decimals` after a point."""

    column: str
    digits: int  # at most 9
    decimals: int = 0
    zero_pad: bool = False  # inside a string (an id); numbers are padded with spaces

    @property
    def width(self) -> int:
        return self.digits + (1 if self.decimals else 0)

    def render(self, values: IntArray) -> npt.NDArray[np.uint8]:
        if values.size and (values.min() < 0 or values.max() >= 10**self.digits):
            raise ValueError(f"{self.column}: values outside 0..{10**self.digits - 1}")
        out = np.empty((len(values), self.width), dtype=np.uint8)
        integer = self.digits - self.decimals
        digit_columns = [c for c in range(self.width) if not (self.decimals and c == integer)]
        if self.decimals:
            out[:, integer] = ord(".")
        rest = values.astype(np.int32)  # 9 digits at most: int32 halves the arithmetic
        for column in reversed(digit_columns):  # a loop over the field's digits, not over boxes
            rest, digit = np.divmod(rest, 10)
            out[:, column] = digit + _DIGIT_ZERO
        if not self.zero_pad:
            # leading zeros of the integer part become spaces; the units digit stays
            for column in range(integer - 1):
                out[values < 10 ** (self.digits - 1 - column), column] = _SPACE
        return out


Piece = bytes | Field


@dataclass(frozen=True)
class Row:
    """A fixed-width byte row: literal pieces and fields."""

    pieces: tuple[Piece, ...]

    @property
    def width(self) -> int:
        return sum(len(p) if isinstance(p, bytes) else p.width for p in self.pieces)

    def render(self, columns: dict[str, IntArray], n: int) -> npt.NDArray[np.uint8]:
        parts = [
            np.broadcast_to(np.frombuffer(p, dtype=np.uint8), (n, len(p)))
            if isinstance(p, bytes)
            else p.render(columns[p.column])
            for p in self.pieces
        ]
        return np.hstack(parts) if parts else np.empty((n, 0), dtype=np.uint8)


_TAIL: Final = b"]}\n"


def shard_bytes(
    header: Row, assets: dict[str, IntArray], record: Row, records: dict[str, IntArray], asset: IntArray
) -> bytes:
    """One JSONL shard: per asset `header`, its annotations (`record` rows, `asset` sorted), `]}`.

    `record` starts with a one-byte separator (`,`) that becomes a space on an asset's first
    annotation; `header` ends with `"annotations":[`.
    """
    n_assets = len(next(iter(assets.values())))
    counts = np.bincount(asset, minlength=n_assets)
    first = np.cumsum(counts) - counts  # index of each asset's first annotation
    rows = record.render(records, len(asset))
    rows[np.arange(len(asset)) == first[asset], 0] = _SPACE
    # between asset i-1's last annotation and asset i's first go i-1's tail and i's header
    tail = np.broadcast_to(np.frombuffer(_TAIL, dtype=np.uint8), (n_assets, len(_TAIL)))
    heads = header.render(assets, n_assets)
    gaps = [heads[:1], np.hstack([tail[:-1], heads[1:]]), tail[-1:]]
    at = np.concatenate([[0], first[1:], [len(asset)]]) * record.width
    sizes = np.full(n_assets + 1, header.width + len(_TAIL))
    sizes[0], sizes[-1] = header.width, len(_TAIL)
    inserted = np.concatenate([g.reshape(-1) for g in gaps])
    return np.insert(rows.reshape(-1), np.repeat(at, sizes), inserted).tobytes()


def asset_header(prefix: bytes, id_digits: int, size_digits: int) -> Row:
    """`{"asset_id":"<prefix><id>","width":W,"height":H,"annotations":[` (columns id, width, height)."""
    return Row(
        (
            b'{"asset_id":"' + prefix,
            Field("id", id_digits, zero_pad=True),
            b'","width":',
            Field("width", size_digits),
            b',"height":',
            Field("height", size_digits),
            b',"annotations":[',
        )
    )


def box_record(coordinate_digits: int, confidence_decimals: int | None) -> Row:
    """`,{"label":"cNN","x_min":…,"y_max":…[,"confidence":…]}`; coordinates in hundredths
    (columns class_id, x_min, y_min, x_max, y_max, confidence)."""
    coordinates: list[Piece] = []
    for name in ("x_min", "y_min", "x_max", "y_max"):
        coordinates += [f',"{name}":'.encode(), Field(name, coordinate_digits, decimals=2)]
    confidence: list[Piece] = []
    if confidence_decimals is not None:
        confidence = [b',"confidence":', Field("confidence", confidence_decimals + 1, confidence_decimals)]
    return Row((b',{"label":"c', Field("class_id", 2, zero_pad=True), b'"', *coordinates, *confidence, b"}"))
