"""The `.npz` chunks a shard writes beside its state (the ledger, the pre-label candidates): columns
saved uncompressed, names as JSON bytes, read back without pickles."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping, Sequence
from typing import Any, Final

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
