"""The `.npz` chunks a shard writes beside its state (the ledger, the pre-label candidates): columns
saved uncompressed, names as JSON bytes, read back without pickles."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from typing import Any, Final

import msgspec
import numpy as np
import numpy.typing as npt
import orjson

Chunk = Mapping[str, npt.NDArray[Any]]
NPZ_MAGIC: Final = b"PK"  # an .npz is a zip file


def names_column(values: Sequence[str]) -> npt.NDArray[np.uint8]:
    """A list of names as one column (JSON bytes): an `.npz` holds no strings without pickles."""
    return np.frombuffer(orjson.dumps(list(values)), dtype=np.uint8)


def names_of(chunk: Chunk, key: str) -> list[str]:
    names: list[str] = orjson.loads(chunk[key].tobytes())
    return names


def saved(columns: Chunk) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, allow_pickle=False, **columns)
    return buffer.getvalue()


# The zip records of an `.npz` of stored (uncompressed) entries, as `zipfile` reads them: a local
# header before each entry's bytes, a central directory entry for each, and its end.
_LOCAL: Final = struct.Struct("<4s5H3L2H")
_CENTRAL: Final = struct.Struct("<4s6H3L5H2L")
_END: Final = struct.Struct("<4s4H2LH")
_ZIP_VERSION: Final = 20  # 2.0: what stored entries need
_ZIP_DATE: Final = (1 << 5) | 1  # 1980-01-01, the zip format's first day
_ZIP_LIMIT: Final = 1 << 32  # past 4 GiB a zip needs its 64-bit records: `saved` writes those


def _npy_header(data: npt.NDArray[Any]) -> bytes:
    """The `.npy` format 1.0 header of a C-contiguous array of a plain dtype (numbers, booleans):
    magic, version, length, then its description padded to a multiple of 64 bytes."""
    text = f"{{'descr': {data.dtype.str!r}, 'fortran_order': False, 'shape': {data.shape!r}, }}"
    padded = text.ljust(-(-(len(text) + 11) // 64) * 64 - 11) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(padded)) + padded.encode("latin1")


class _Entry(msgspec.Struct, frozen=True):
    name: bytes
    header: bytes  # the column's `.npy` header
    data: npt.NDArray[Any]  # C-contiguous

    @property
    def size(self) -> int:
        return len(self.header) + self.data.nbytes

    def crc(self) -> int:
        return zlib.crc32(self.data.reshape(-1).view(np.uint8).data, zlib.crc32(self.header))

    def piece(self) -> memoryview:
        """The column's bytes where they are: written in one call that holds no GIL, never copied."""
        return self.data.reshape(-1).view(np.uint8).data


class StreamedChunk(msgspec.Struct, frozen=True, dict=True):
    """A chunk's `.npz` (what `saved` makes, read back by `loaded` alike), made piece by piece as a
    store writes it (`Store.put` takes any iterable of pieces): each column's data is written from
    where it is, never held a second time. `len` is its size in bytes."""

    columns: Chunk

    @cached_property
    def _entries(self) -> list[_Entry]:
        entries = []
        for key, values in self.columns.items():
            data = np.asarray(values, order="C")
            entries.append(_Entry(f"{key}.npy".encode(), _npy_header(data), data))
        return entries

    def __len__(self) -> int:
        local = sum(_LOCAL.size + len(e.name) + e.size for e in self._entries)
        return local + sum(_CENTRAL.size + len(e.name) for e in self._entries) + _END.size

    def __bytes__(self) -> bytes:
        return b"".join(self)

    def __iter__(self) -> Iterator[bytes | memoryview]:
        if len(self) >= _ZIP_LIMIT or len(self._entries) >= 1 << 16:
            yield saved(self.columns)
            return
        central, offset = [], 0
        for entry in self._entries:
            crc = entry.crc()
            stored = (_ZIP_VERSION, 0, 0, 0, _ZIP_DATE, crc, entry.size, entry.size, len(entry.name))
            yield _LOCAL.pack(b"PK\x03\x04", *stored, 0) + entry.name + entry.header
            yield entry.piece()
            central.append(
                _CENTRAL.pack(b"PK\x01\x02", _ZIP_VERSION, *stored, 0, 0, 0, 0, 0, offset) + entry.name
            )
            offset += _LOCAL.size + len(entry.name) + entry.size
        listing = b"".join(central)
        count = len(central)
        yield listing + _END.pack(b"PK\x05\x06", 0, 0, count, count, len(listing), offset, 0)


def loaded(content: bytes, keys: Sequence[str] | None = None) -> dict[str, npt.NDArray[Any]]:
    """Every column of a chunk (`keys`: those of them it has), read at once (a damaged chunk raises
    ValueError)."""
    if not content.startswith(NPZ_MAGIC):  # np.load would read a lone array or guess at a pickle
        raise ValueError("damaged chunk (not an .npz: expected a zip of numpy arrays)")
    try:
        with np.load(io.BytesIO(content), allow_pickle=False) as chunk:
            return {key: chunk[key] for key in chunk.files if keys is None or key in keys}
    except (OSError, EOFError, KeyError, ValueError, zipfile.BadZipFile) as error:
        raise ValueError(f"damaged chunk ({error})") from error


def check_rows(chunk: Chunk, columns: Sequence[str], bounds: Mapping[str, int]) -> None:
    """Every column of `columns` present has one row per row of the first, and every index column
    of `bounds` points inside what it indexes (-1 is none); ValueError for a damaged chunk."""
    present = [key for key in columns if key in chunk]
    rows = len(chunk[present[0]]) if present else 0
    short = [key for key in present if len(chunk[key]) != rows]
    if short:
        raise ValueError(f"damaged chunk: {short[0]} has {len(chunk[short[0]])} rows, expected {rows}")
    for key, bound in bounds.items():
        values = chunk.get(key)
        if values is not None and len(values) and (values.min() < -1 or values.max() >= bound):
            raise ValueError(f"damaged chunk: {key} points outside its {bound} entries")
