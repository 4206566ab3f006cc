"""The `--slices` file: slice name -> asset ids, read and checked.

The `slices` section built from it is handler/features/slices/section.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import orjson

from handler.errors import InputError, StorageError
from handler.storage.local import read_local_file

SliceFile = Mapping[str, Sequence[str]]


def read_slices(path: str) -> dict[str, tuple[str, ...]]:
    """A JSON object of slice name -> list of asset ids; anything else is the user's to fix."""
    try:
        document = orjson.loads(read_local_file(path, "--slices"))
    except StorageError as error:  # refused by the OS, not a regular file, too large
        raise InputError(f"--slices {path}: cannot read it ({error})") from None
    except orjson.JSONDecodeError as error:
        raise InputError(f"--slices {path}: not JSON ({error})") from None
    valid = isinstance(document, dict) and all(
        isinstance(ids, list) and all(isinstance(i, str | int) for i in ids) for ids in document.values()
    )
    if not valid:
        raise InputError(f"--slices {path}: expected a JSON object of slice name -> list of asset ids")
    return {str(name): tuple(str(i) for i in ids) for name, ids in document.items()}
