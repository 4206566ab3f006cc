"""The report asset: which parts it has, and how it is published to and read from a store.

Layout under the store: `reports/<id>/findings.json`, `report.html`, `outcomes.jsonl` and
`manifest.json`. A part may instead be written as numbered chunk objects
(`outcomes/00000.jsonl`, `outcomes/00001.jsonl`, ...), e.g. one per shard of the evaluation;
reading the part concatenates them in order, byte for byte what one object would hold.

Publishing writes every part, then the manifest, which lists the objects in the order they
were written. A report without a manifest does not exist for readers; a failed publish deletes
what it wrote.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from contextlib import suppress
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Final

from handler.errors import StorageError
from handler.storage import AccessDenied, Content, ObjectNotFound, Store
from handler.storage.base import check_id

MANIFEST: Final = "manifest.json"
MANIFEST_TYPE: Final = "application/json"


@dataclass(frozen=True)
class ReportPart:
    name: str
    content_type: str

    def chunk(self, index: int) -> str:
        path = PurePosixPath(self.name)
        return f"{path.stem}/{index:05d}{path.suffix}"

    def objects(self, listed: Iterable[str]) -> list[str]:
        """The objects of a manifest that hold this part, in the order they were written."""
        folder = f"{PurePosixPath(self.name).stem}/"
        return [name for name in listed if name == self.name or name.startswith(folder)]


# The parts of a report asset, written in this order.
REPORT_PARTS: Final = {
    "findings": ReportPart("findings.json", "application/json"),
    "html": ReportPart("report.html", "text/html; charset=utf-8"),
    "outcomes": ReportPart("outcomes.jsonl", "application/x-ndjson"),
    "routing": ReportPart("routing.json", "application/json"),  # class -> threshold or null
}


@dataclass(frozen=True)
class Chunked:
    """A part written as one object per chunk, as the chunks come (e.g. shard by shard)."""

    chunks: Iterable[Content]


@dataclass(frozen=True)
class Written:
    """A part whose `count` chunk objects the shards already wrote, each at `chunk_key`."""

    count: int


PartContent = Content | Chunked | Written


def report_folder(report_id: str) -> str:
    return f"reports/{check_id(report_id, 'report id')}"


def report_location(store: Store, report_id: str) -> str:
    """Where a human finds the report."""
    return store.url(report_folder(report_id)) + "/"


def chunk_key(report_id: str, part: str, index: int) -> str:
    """Where chunk `index` of a report part is written (by a shard, before the publish)."""
    return f"{report_folder(report_id)}/{REPORT_PARTS[part].chunk(index)}"


def discard_chunks(store: Store, report_id: str, part: str, count: int) -> None:
    """Delete what shards wrote for a report that will not be published (best effort)."""
    with suppress(StorageError):
        store.delete(chunk_key(report_id, part, index) for index in range(count))


def _objects(part: ReportPart, content: PartContent) -> Iterator[tuple[str, Content | None]]:
    """The objects of a part and what to put in each; None: a shard already wrote it."""
    if isinstance(content, Written):
        yield from ((part.chunk(index), None) for index in range(content.count))
        return
    if not isinstance(content, Chunked):
        yield part.name, content
        return
    count = 0
    for count, chunk in enumerate(content.chunks, start=1):
        yield part.chunk(count - 1), chunk
    if count == 0:  # an empty part still exists: one empty chunk says so
        yield part.chunk(0), b""


def _already_published(store: Store, manifest: str) -> bool:
    try:
        return store.exists(manifest)
    except AccessDenied:
        return False  # a write-only role cannot look; the upload itself will say if it may write


def publish_report(store: Store, report_id: str, parts: Mapping[str, PartContent]) -> None:
    """Write every part, then the manifest; on any failure, delete what was written."""
    folder = report_folder(report_id)
    plan = [(REPORT_PARTS[key], content) for key, content in parts.items()]  # unknown part: KeyError
    written: list[str] = []
    try:
        if _already_published(store, f"{folder}/{MANIFEST}"):
            raise StorageError(f"report {report_id!r} already exists in {store.uri}; it is not overwritten")
        for part, content in plan:
            for name, chunk in _objects(part, content):
                written.append(name)  # before the put: a failed write may still have stored it
                if chunk is not None:
                    store.put(f"{folder}/{name}", chunk, part.content_type)
        manifest = json.dumps({"report_id": report_id, "parts": list(written)}).encode()
        written.append(MANIFEST)
        store.put(f"{folder}/{MANIFEST}", manifest, MANIFEST_TYPE)
    except StorageError as error:
        _undo(store, folder, written)
        raise StorageError(f"cannot write report {report_id!r}: {error}") from error
    except BaseException:  # an interrupt, or a bug in the chunks' producer
        _undo(store, folder, written)
        raise


def _undo(store: Store, folder: str, written: list[str]) -> None:
    """Best effort, manifest first: the publish already failed, and its error is the one to see."""
    with suppress(StorageError):
        store.delete(f"{folder}/{name}" for name in reversed(written))


def _get(store: Store, key: str, report_id: str) -> bytes:
    try:
        return store.get(key)
    except StorageError as error:
        # The same kind, so a missing manifest stays recognisable as ObjectNotFound.
        raise type(error)(f"cannot read report {report_id!r}: {error}") from error


def _manifest(store: Store, folder: str, report_id: str) -> list[str]:
    try:
        document: Any = json.loads(_get(store, f"{folder}/{MANIFEST}", report_id))
    except ObjectNotFound:
        raise StorageError(f"{store.uri}: no report {report_id!r}") from None
    except ValueError as error:
        raise StorageError(f"{store.uri}: report {report_id!r} has a damaged manifest") from error
    listed = document.get("parts") if isinstance(document, dict) else None
    if not isinstance(listed, list) or not all(isinstance(name, str) for name in listed):
        raise StorageError(f"{store.uri}: report {report_id!r} has a damaged manifest")
    return listed


def read_report_part(store: Store, report_id: str, part: str) -> bytes:
    """One part of a published report, its chunks joined; a StorageError line when absent."""
    folder = report_folder(report_id)
    names = REPORT_PARTS[part].objects(_manifest(store, folder, report_id))
    if not names:
        raise StorageError(f"{store.uri}: report {report_id!r} has no {part}")
    return b"".join(_get(store, f"{folder}/{name}", report_id) for name in names)
