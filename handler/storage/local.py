"""The embedded default: a folder on the local disk as the asset store.

Folders play the part of S3 prefixes: they appear when an object is put under them and
disappear when their last object is deleted, so both backends look alike to a reader.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path
from typing import BinaryIO, Final

from handler.errors import StorageError
from handler.storage.base import Content, Entry, ObjectNotFound, RangedFile, Source, Store, split_scheme
from handler.storage.paths import local_path


def _file_mode() -> int:
    """What `open()` would give a new file: 0o666 less the umask (mkstemp's files are 0o600)."""
    umask = os.umask(0o077)  # the only way to read it; put back at once
    os.umask(umask)
    return 0o666 & ~umask


def _failure(path: Path, action: str, error: OSError) -> StorageError:
    if isinstance(error, FileNotFoundError):
        return ObjectNotFound(f"{path}: no such file")
    return StorageError(f"{path}: cannot {action} ({error.strerror or error})")


# What a write never replaces, by the kind lstat reports (a regular file or nothing: written).
_NOT_REPLACED: Final = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
)


def _replaceable(path: Path) -> None:
    """Refuse a target that is not a regular file (nor absent): the write's rename would replace a
    device, a pipe, a link or a folder with a file, even as root."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    for test, kind in _NOT_REPLACED:
        if test(mode):
            raise StorageError(f"{path}: is {kind}, not a regular file: not written over")


class LocalSource(Source):
    """A local file or folder; only regular files are read (not devices, pipes or /proc oddities)."""

    def __init__(self, path: Path) -> None:
        self._path = path

    @property
    def name(self) -> str:
        return str(self._path)

    @property
    def basename(self) -> str:
        return self._path.name

    def is_dir(self) -> bool:
        mode = _mode(self._path)
        return mode is not None and stat.S_ISDIR(mode)

    def files(self, depth: int | None = None) -> list[Source]:
        return [LocalSource(path) for path in _regular_files(self._path, depth, enter_hidden=False)]

    def child(self, relative: str) -> Source:
        return LocalSource(self._path.joinpath(*relative.split("/")))

    def ranged(self) -> RangedFile | None:
        try:
            status = self._path.stat()
        except OSError:
            return None
        return _LocalRanges(self._path, status) if stat.S_ISREG(status.st_mode) else None

    def open(self) -> BinaryIO:
        try:
            # Opened without blocking, so a FIFO with no writer is refused, not waited on forever.
            descriptor = os.open(self._path, os.O_RDONLY | os.O_NONBLOCK)
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                os.close(descriptor)
                raise StorageError(
                    f"{self._path}: not a regular file (a device, pipe or socket): "
                    "expected a file or a folder of them"
                )
            os.set_blocking(descriptor, True)
            return os.fdopen(descriptor, "rb")
        except StorageError:
            raise
        except OSError as error:
            raise _failure(self._path, "be read", error) from error


class _LocalRanges(RangedFile):
    """A regular local file read with pread(2); its identity is its inode, size and mtime."""

    def __init__(self, path: Path, status: os.stat_result) -> None:
        self._path = path
        self._identity = _identity(status)

    @property
    def size(self) -> int:
        return self._identity[2]

    def read(self, start: int, stop: int) -> bytes:
        with self._path.open("rb") as stream:
            blocks, position = [], start
            while position < stop and (block := os.pread(stream.fileno(), stop - position, position)):
                blocks.append(block)
                position += len(block)
        return blocks[0] if len(blocks) == 1 else b"".join(blocks)

    def unchanged(self) -> bool:
        try:
            return _identity(self._path.stat()) == self._identity
        except OSError:
            return False


def _identity(status: os.stat_result) -> tuple[int, int, int, int]:
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns


def _mode(path: Path) -> int | None:
    """The file's mode, None when it does not exist or cannot be looked at (e.g. a name too long)."""
    try:
        return path.stat().st_mode
    except OSError:
        return None


def _regular_files(folder: Path, depth: int | None = None, enter_hidden: bool = True) -> list[Path]:
    """The regular files under `folder`, recursively (symlinked folders not entered, nor hidden ones
    unless `enter_hidden`: a store's staging is hidden, a dataset's `.git` is not its data; `depth`
    folders down at most), sorted: each entry's kind from its directory listing (a link is looked
    through once, to see whether it names a file)."""
    found: list[Path] = []
    pending = [(folder, 0)]
    while pending:
        parent, level = pending.pop()
        try:
            with os.scandir(parent) as listing:
                entries = list(listing)
        except FileNotFoundError:  # vanished while listed (a folder being cleaned, /proc)
            continue
        except OSError as error:
            raise StorageError(f"{folder}: cannot list {parent} in it ({error.strerror or error})") from error
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if (depth is None or level < depth) and (enter_hidden or not entry.name.startswith(".")):
                    pending.append((Path(entry.path), level + 1))
            elif _names_file(entry):
                found.append(Path(entry.path))
    return sorted(found)


def _names_file(entry: os.DirEntry[str]) -> bool:
    """A regular file, or a link to one; not a dangling link, nor one that cannot be looked through
    (a process's links in /proc: its own permission or its process gone)."""
    try:
        return entry.is_file()
    except OSError:
        return False


class LocalStore(Store):
    renames_folders = True

    def __init__(self, root: Path) -> None:
        self._root = root

    @classmethod
    def from_uri(cls, uri: str) -> LocalStore:
        return cls(Path(split_scheme(uri)[1]))

    @classmethod
    def source_at(cls, uri: str) -> Source:
        return LocalSource(Path(split_scheme(uri)[1]))

    @property
    def uri(self) -> str:
        return str(self._root)

    def _path(self, key: str) -> Path:
        return self._root / key

    def source(self, key: str) -> Source:
        return LocalSource(self._path(key))

    def check_replaceable(self, key: str) -> None:
        _replaceable(self._path(key))

    def put(self, key: str, content: Content, content_type: str) -> None:
        path = self._path(key)
        try:
            _replaceable(path)  # before the first byte
            path.parent.mkdir(parents=True, exist_ok=True)
            # A hidden temporary file beside the target, then one rename: never half a file.
            handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
            try:
                os.fchmod(handle, _file_mode())  # readable as the umask allows, like any file the user writes
                with os.fdopen(handle, "wb") as stream:
                    for chunk in [content] if isinstance(content, bytes) else content:
                        stream.write(chunk)
                os.replace(temporary, path)
            except BaseException:
                with suppress(OSError):  # a clean-up that fails (a read-only folder) hides nothing
                    Path(temporary).unlink(missing_ok=True)
                raise
        except StorageError:
            raise  # the content's producer failed (a shard that cannot be read), not the disk
        except OSError as error:
            raise _failure(path, "be written", error) from error

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def delete(self, keys: Iterable[str]) -> None:
        first: StorageError | None = None
        for key in keys:
            path = self._path(key)
            try:
                path.unlink(missing_ok=True)
                self._prune(path.parent)
            except OSError as error:
                failure = _failure(path, "be deleted", error)
                failure.__cause__ = error
                first = first or failure
        if first is not None:
            raise first

    def _prune(self, folder: Path) -> None:
        """Remove folders left empty, up to (not including) the root."""
        while folder != self._root and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent

    def entries(self, prefix: str) -> dict[str, Entry]:
        found = {}
        for path in _regular_files(self._path(prefix)):
            try:
                status = path.stat()
            except FileNotFoundError:
                continue  # deleted since it was listed
            found[path.relative_to(self._root).as_posix()] = Entry(status.st_size, status.st_mtime)
        return found

    def rename_folder(self, source: str, target: str) -> None:
        destination = self._path(target)
        try:
            destination.parent.mkdir(parents=True, exist_ok=True)
            # One rename(2): readers see no folder or the whole one. A target folder with
            # files in it makes it fail (ENOTEMPTY) rather than merge.
            os.rename(self._path(source), destination)
        except OSError as error:
            raise _failure(destination, "be moved into place", error) from error


def read_local_file(path: str, what: str) -> bytes:
    """A local file a user names (`what`: the option), whole: a path the OS refuses, a file that is
    not regular (a device, a FIFO) or is over the size bound is one StorageError, before a byte."""
    return LocalSource(local_path(path, what)).read_bytes()
