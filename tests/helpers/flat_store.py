"""A throwaway storage backend, `flat://<folder>`: every object is one file in one folder, its
key percent-quoted into the file name. It implements only the abstract methods of `Store` and
`Source` (no folder renames, so reports are written in place, manifest last, as on S3), and a
test adds its scheme to `BACKENDS`: the storage contract suite then runs against it, chunks
written by other processes included. It proves what a new backend costs.

Dataset references name the folder and the key apart: `flat://<folder>#<key>`.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO, Final
from urllib.parse import quote, unquote

from handler.errors import StorageError
from handler.storage import Content, Entry, ObjectNotFound, Source, Store
from handler.storage.base import path_order, split_scheme

SCHEME: Final = "flat"
TEMPORARY: Final = ".tmp-"


def _folder_prefix(key: str) -> str:
    return "" if key.strip("/") == "" else key.rstrip("/") + "/"


def _entries(root: Path, prefix: str) -> dict[str, Entry]:
    """Every key under the folder `prefix`, with its size and time."""
    folder = _folder_prefix(prefix)
    found = {}
    for name in os.listdir(root) if root.is_dir() else []:
        key = unquote(name)
        if not name.startswith(TEMPORARY) and key.startswith(folder):
            status = (root / name).stat()
            found[key] = Entry(status.st_size, status.st_mtime)
    return found


class FlatSource(Source):
    def __init__(self, root: Path, key: str, *, folder: bool | None = None) -> None:
        self._root, self._key, self._folder = root, key, folder

    @property
    def name(self) -> str:
        return f"{SCHEME}://{self._root}#{self._key}"

    @property
    def basename(self) -> str:
        return self._key.rstrip("/").rsplit("/", 1)[-1]

    def is_dir(self) -> bool:
        if self._folder is None:
            whole = not self._key.endswith("/") and (self._root / quote(self._key, safe="")).is_file()
            self._folder = not whole and bool(_entries(self._root, self._key))
        return self._folder

    def files(self) -> list[Source]:
        if not self.is_dir():
            return []
        keys = sorted(_entries(self._root, self._key), key=path_order)
        return [FlatSource(self._root, key, folder=False) for key in keys]

    def child(self, relative: str) -> Source:
        return FlatSource(self._root, _folder_prefix(self._key) + relative, folder=False)

    def open(self) -> BinaryIO:
        try:
            return (self._root / quote(self._key, safe="")).open("rb")
        except FileNotFoundError:
            raise ObjectNotFound(f"{self.name}: no such object") from None
        except OSError as error:
            raise StorageError(f"{self.name}: cannot be read ({error.strerror})") from error


class FlatStore(Store):
    def __init__(self, root: Path) -> None:
        self._root = root

    @classmethod
    def from_uri(cls, uri: str) -> Store:
        return cls(Path(split_scheme(uri)[1]))

    @classmethod
    def source_at(cls, uri: str) -> Source:
        root, _, key = split_scheme(uri)[1].partition("#")
        return FlatSource(Path(root), key)

    @property
    def uri(self) -> str:
        return f"{SCHEME}://{self._root}"

    def source(self, key: str) -> Source:
        return FlatSource(self._root, key)

    def put(self, key: str, content: Content, content_type: str) -> None:
        self._root.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=TEMPORARY, dir=self._root)
        try:
            with os.fdopen(handle, "wb") as stream:
                for chunk in [content] if isinstance(content, bytes) else content:
                    stream.write(chunk)
            os.replace(temporary, self._root / quote(key, safe=""))
        except BaseException:  # the content's producer failed, or the disk did
            Path(temporary).unlink(missing_ok=True)
            raise

    def exists(self, key: str) -> bool:
        return (self._root / quote(key, safe="")).is_file()

    def delete(self, keys: Iterable[str]) -> None:
        for key in keys:
            (self._root / quote(key, safe="")).unlink(missing_ok=True)

    def entries(self, prefix: str) -> dict[str, Entry]:
        return _entries(self._root, prefix)
