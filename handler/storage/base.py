"""The storage interface: byte objects under keys, the same primitives on every backend.

A store knows nothing about reports: it puts, gets, lists and deletes objects named by keys
relative to its root (`reports/<id>/findings.json`), in the spirit of fsspec. What a report
is made of, and how it is published, is `handler.report.publish.asset`'s business.
"""

from __future__ import annotations

import os
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from typing import BinaryIO, ClassVar, Final, Protocol

import msgspec

from handler.errors import StorageError, UserError

# A piece of an object: bytes, or a view of memory the object's maker holds (written, not copied).
Piece = bytes | memoryview
# What `put` accepts: the whole object, or its chunks in order (streamed, never joined here).
Content = bytes | Iterable[Piece]


class SizedContent(Protocol):
    """An object's chunks in order, made as they are written, and its size in bytes (a worker's
    chunk written without being held whole)."""

    def __iter__(self) -> Iterator[Piece]: ...

    def __len__(self) -> int: ...


# Report and dataset ids are single path segments: no separators, no "..", not hidden.
_ID_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
# `scheme://rest`; anything else (including `C:\data`) is a local path.
_SCHEME_PATTERN: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+)://(.*)", re.DOTALL)


class ObjectNotFound(StorageError, FileNotFoundError):
    """The key holds no object (what fsspec raises as FileNotFoundError)."""


class AccessDenied(StorageError, PermissionError):
    """The credentials may not do this here (fsspec: PermissionError)."""


# One dataset file is read whole into memory: past this many bytes it is refused (a device,
# a runaway file), unless $PRELABEL_MAX_DATASET_BYTES says otherwise.
MAX_BYTES_VARIABLE: Final = "PRELABEL_MAX_DATASET_BYTES"
DEFAULT_MAX_BYTES: Final = 4 << 30
# A stream of unknown length (an S3 body) is read this much at a time.
READ_BLOCK_BYTES: Final = 8 << 20


def max_file_bytes() -> int:
    raw = os.environ.get(MAX_BYTES_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_MAX_BYTES
    if not raw.isdigit() or int(raw) == 0:
        raise UserError(f"{MAX_BYTES_VARIABLE}={raw[:40]!r}: expected a positive whole number of bytes")
    return int(raw)


def split_scheme(uri: str) -> tuple[str, str]:
    """`s3://bucket/key` -> ("s3", "bucket/key"); a plain path -> ("", path)."""
    found = _SCHEME_PATTERN.fullmatch(uri)
    return (found[1].lower(), found[2]) if found else ("", uri)


def check_id(value: str, what: str) -> str:
    """Refuse an id that could escape its folder in the store."""
    if not _ID_PATTERN.fullmatch(value) or ".." in value:
        raise StorageError(
            f"{what} {value!r} is not a valid id: expected letters, digits, '.', '_' or '-' (no '/', no '..')"
        )
    return value


def path_order(key: str) -> list[str]:
    """Sort keys by path segments, as pathlib sorts a folder, so every backend lists alike."""
    return key.split("/")


class RangedFile(ABC):
    """A file of known size read a byte range at a time, in any process (forked workers read
    their own parts of a big dataset file this way, so that no process holds all of it)."""

    @property
    @abstractmethod
    def size(self) -> int:
        """Bytes, when the file was looked at."""

    @abstractmethod
    def read(self, start: int, stop: int) -> bytes:
        """Bytes `start` to `stop` (fewer when the file shrank); any failure is an OSError."""

    @abstractmethod
    def unchanged(self) -> bool:
        """Whether the file is still the one whose size was taken (not rewritten since)."""


class Source(ABC):
    """A dataset file or folder, wherever it lives; readers see only this."""

    @property
    @abstractmethod
    def name(self) -> str:
        """Full path or URI, for messages."""

    @property
    @abstractmethod
    def basename(self) -> str:
        """The last path segment (file name)."""

    @abstractmethod
    def is_dir(self) -> bool: ...

    @abstractmethod
    def files(self, depth: int | None = None) -> list[Source]:
        """Every file under this folder, recursively (`depth` folders down at most; a local hidden
        folder is not entered), sorted by name."""

    @abstractmethod
    def child(self, relative: str) -> Source:
        """The file at the '/'-separated path `relative` under this folder (it need not exist)."""

    @abstractmethod
    def open(self) -> BinaryIO:
        """A binary stream of the file's content; `ObjectNotFound` when there is none."""

    def ranged(self) -> RangedFile | None:
        """This file for reads of byte ranges, where the backend has them (None: read it whole;
        a folder or a file that cannot be looked at is None too: `read_bytes` says why)."""
        return None

    def read_at_most(self, limit: int) -> bytes | None:
        """The whole content, None when it holds more than `limit` bytes; any read failure is a
        StorageError line."""
        try:
            with self.open() as stream:
                return _read_at_most(stream, limit)
        except StorageError:
            raise
        except OSError as error:  # e.g. EIO from /proc/self/mem, a disk error mid-read
            raise StorageError(f"{self.name}: cannot be read ({error.strerror or error})") from error

    def read_bytes(self) -> bytes:
        """The whole content, at most `max_file_bytes()`; any read failure is a StorageError line."""
        limit = max_file_bytes()
        content = self.read_at_most(limit)
        if content is None:
            raise StorageError(
                f"{self.name}: larger than {limit} bytes, the most read from one dataset file "
                f"(set {MAX_BYTES_VARIABLE} to raise it)"
            )
        return content


class Entry(msgspec.Struct, frozen=True):
    """What a listing says of one object: enough to check a write and to collect garbage."""

    size: int  # bytes
    modified: float  # when it was last written, seconds since the epoch


def _known_size(stream: BinaryIO) -> int | None:
    """The file's size when the stream is a file on disk, None for a network body."""
    try:
        return os.fstat(stream.fileno()).st_size
    except (OSError, ValueError):  # io.UnsupportedOperation is both
        return None


def _read_at_most(stream: BinaryIO, limit: int) -> bytes | None:
    """The stream's content, or None when it holds more than `limit` bytes.

    `read(n)` reserves n bytes before it reads, so the limit itself is never asked for: a
    file of known size is read in one call of its size (+1 to notice growth), anything else
    in blocks, so a small file costs small memory even under an address-space cap.
    """
    size = _known_size(stream)
    if size is not None and size > limit:
        return None
    want = READ_BLOCK_BYTES if size is None else size + 1
    blocks: list[bytes] = []
    total = 0
    while block := stream.read(min(want, limit + 1 - total)):
        blocks.append(block)
        total += len(block)
        if total > limit:
            return None
        want = READ_BLOCK_BYTES
    return blocks[0] if len(blocks) == 1 else b"".join(blocks)


class Store(ABC):
    """Objects under keys relative to the store's root; datasets live under `datasets/<id>/`.

    Every failure is one StorageError line naming the object and why, chained to the
    backend's own error; a missing object is `ObjectNotFound`, a refusal `AccessDenied`.
    """

    # True where `rename_folder` moves a folder in one atomic step (a local file system):
    # a report is then written under a hidden name and appears whole. Where it cannot (S3),
    # a report is written in place, its manifest last.
    renames_folders: ClassVar[bool] = False

    def check_replaceable(self, key: str) -> None:  # noqa: B027 (a hook: most stores have nothing to refuse)
        """Refuse, with a StorageError, a key whose object a put must not replace (a local device,
        pipe, link or folder); an object store has none."""

    @classmethod
    @abstractmethod
    def from_uri(cls, uri: str) -> Store:
        """The store rooted at `uri` (its scheme already chosen this class)."""

    @classmethod
    @abstractmethod
    def source_at(cls, uri: str) -> Source:
        """A dataset file or folder named by a full URI of this backend."""

    @property
    @abstractmethod
    def uri(self) -> str: ...

    @abstractmethod
    def source(self, key: str) -> Source:
        """The file or folder at `key` (a trailing '/' names a folder)."""

    @abstractmethod
    def put(self, key: str, content: Content, content_type: str) -> None:
        """Write one object whole: readers see the old object or the new one, never a part."""

    @abstractmethod
    def exists(self, key: str) -> bool: ...

    @abstractmethod
    def delete(self, keys: Iterable[str]) -> None:
        """Delete these objects in order (absent ones are fine); tries all, raises the first error."""

    @abstractmethod
    def entries(self, prefix: str) -> dict[str, Entry]:
        """Every key under the folder `prefix` (hidden temporary files too), with its size and
        the time it was last written: what a publish checks and a garbage collector needs."""

    def rename_folder(self, source: str, target: str) -> None:
        """Move every object under folder `source` to folder `target` at once (only where
        `renames_folders`); an existing `target` with objects in it is an error, never merged."""
        raise StorageError(f"{self.uri}: this store cannot rename folders")

    def list(self, prefix: str) -> list[str]:
        """Every key under the folder `prefix`, recursively, in path-segment order."""
        return sorted(self.entries(prefix), key=path_order)

    def open(self, key: str) -> BinaryIO:
        """A stream of one object, read as it arrives."""
        return self.source(key).open()

    def get(self, key: str) -> bytes:
        return self.source(key).read_bytes()

    def dataset(self, dataset_id: str) -> Source:
        """The folder `datasets/<id>/` of this store."""
        return self.source(f"datasets/{check_id(dataset_id, 'dataset id')}/")

    def url(self, key: str) -> str:
        """Where a human finds `key`."""
        return f"{self.uri.rstrip('/')}/{key}"
