"""What the operating system refuses in a local path, said before any file is touched.

Every local path a user gives (a dataset reference, a names or layout file, `--slices`, the store
root, an output file) passes here through the registry's resolution (`open_source`,
`resolve_dataset`, `open_store`) or `local_path`, so each refusal is one line naming the input,
instead of an `OSError` (a name too long) or a `ValueError` (an embedded NUL) from deep inside a
reader.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Final

from handler.errors import StorageError, quoted

# POSIX's floors, for a system that cannot say (Linux says 255 and 4096).
DEFAULT_NAME_MAX: Final = 255
DEFAULT_PATH_MAX: Final = 4096
_TOO_LONG: Final = os.strerror(errno.ENAMETOOLONG)  # the words the user would search for


def local_path(text: str, what: str, room: int = 0) -> Path:
    """`text` as a path, or a StorageError naming `what` (e.g. `GT_DATASET`) and why the OS refuses
    it; `room`: bytes of names that will be added under it (a store's keys)."""
    reason = refusal(text, room)
    if reason is not None:
        raise StorageError(f"{what} {quoted(text)}: {reason}")
    return Path(text)


def refusal(text: str, room: int = 0) -> str | None:
    """Why no file can have the path `text`, or no path `room` bytes longer below it (None:
    nothing the OS refuses before looking)."""
    if "\0" in text:
        return "contains a NUL character, which no path can"
    try:
        raw = os.fsencode(text)
    except UnicodeError:
        return "has characters that cannot be a file name here (not encodable)"
    path_max = _limit("/", "PC_PATH_MAX", DEFAULT_PATH_MAX)
    if len(raw) + room >= path_max:  # the limit counts the terminating NUL
        left = f", less {room} for the names kept under it" if room else ""
        return f"a path of {len(raw)} bytes: {_TOO_LONG} (the limit is {path_max - 1}{left})"
    return _long_name(raw) or _file_on_the_way(Path(text))


def _long_name(raw: bytes) -> str | None:
    longest = max(raw.split(b"/"), key=len)
    name_max = _limit(".", "PC_NAME_MAX", DEFAULT_NAME_MAX)
    if len(longest) <= name_max:
        return None
    return f"a name of {len(longest)} bytes in it: {_TOO_LONG} (the limit is {name_max})"


def _file_on_the_way(path: Path) -> str | None:
    """A folder of the path that is a file (ENOTDIR), nearest the root first."""
    for folder in reversed(path.parents):
        try:
            mode = folder.stat().st_mode
        except OSError:
            return None  # missing or unreadable from here on: what opening it says is clearer
        if not stat.S_ISDIR(mode):
            return f"{quoted(str(folder))} is a file, not a folder"
    return None


def _limit(path: str, name: str, default: int) -> int:
    try:
        return os.pathconf(path, name)
    except (OSError, ValueError):
        return default
