"""The report asset: which parts it has, and how it is published to and read from a store.

Layout under the store: `reports/<id>/findings.json`, `report.html`, `outcomes.jsonl` and
`manifest.json`. A part may instead be written as numbered chunk objects
(`outcomes/00000.jsonl`, `outcomes/00001.jsonl`, ...), e.g. one per shard of the evaluation;
reading the part concatenates them in order, byte for byte what one object would hold.

Publishing writes every part, then the manifest, which lists the objects in the order they
were written. A report without a manifest does not exist for readers; a failed publish deletes
what it wrote. What a publish that never finished left (SIGKILL, power loss, a cut connection)
is staging: everything under `reports/<id>/` without `manifest.json`, including chunk folders
and the local store's hidden `.<name>.*.part` files. Staging whose newest object is older than
a safe age cannot belong to a live run; `collect_garbage` deletes it, and every publish runs it.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from contextlib import suppress
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Final

import orjson

from handler.errors import InputError, StorageError
from handler.storage import AccessDenied, Content, ObjectNotFound, Store
from handler.storage.base import check_id

MANIFEST: Final = "manifest.json"
MANIFEST_TYPE: Final = "application/json"

REPORTS: Final = "reports/"
# Older than this, staging cannot belong to a live run: no evaluation takes a day.
SAFE_AGE_SECONDS: Final = 24 * 3600
# A temporary file of the local store: `.<name>.<random>.part` beside its target.
_TEMPORARY: Final = re.compile(r"(^|/)\.[^/]+\.part$")
_DURATION: Final = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd]?)")
_UNIT_SECONDS: Final = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


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
        manifest = orjson.dumps({"report_id": report_id, "parts": list(written)})
        written.append(MANIFEST)
        store.put(f"{folder}/{MANIFEST}", manifest, MANIFEST_TYPE)
    except StorageError as error:
        _undo(store, folder, written)
        raise StorageError(f"cannot write report {report_id!r}: {error}") from error
    except BaseException:  # an interrupt, or a bug in the chunks' producer
        _undo(store, folder, written)
        raise
    with suppress(StorageError):  # the report is out; old staging is housekeeping
        collect_garbage(store, SAFE_AGE_SECONDS)


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
        document: Any = orjson.loads(_get(store, f"{folder}/{MANIFEST}", report_id))
    except ObjectNotFound:
        raise StorageError(f"{store.uri}: no report {report_id!r}") from None
    except ValueError as error:
        raise StorageError(f"{store.uri}: report {report_id!r} has a damaged manifest") from error
    listed = document.get("parts") if isinstance(document, dict) else None
    if not isinstance(listed, list) or not all(isinstance(name, str) for name in listed):
        raise StorageError(f"{store.uri}: report {report_id!r} has a damaged manifest")
    return listed


def list_reports(store: Store) -> list[str]:
    """The published reports (those with a manifest), latest first: report ids sort by creation time."""
    manifests = (key.split("/") for key in store.list("reports/"))
    return sorted({parts[1] for parts in manifests if len(parts) == 3 and parts[2] == MANIFEST}, reverse=True)


def latest_report(store: Store) -> str:
    listed = list_reports(store)
    if not listed:
        raise StorageError(f"{store.uri}: no report yet (run prelabel-eval GT PRED first)")
    return listed[0]


def read_report_part(store: Store, report_id: str, part: str) -> bytes:
    """One part of a published report, its chunks joined; a StorageError line when absent."""
    folder = report_folder(report_id)
    names = REPORT_PARTS[part].objects(_manifest(store, folder, report_id))
    if not names:
        raise StorageError(f"{store.uri}: report {report_id!r} has no {part}")
    return b"".join(_get(store, f"{folder}/{name}", report_id) for name in names)


def parse_duration(text: str) -> float:
    """`90`, `90s`, `30m`, `24h`, `7d` -> seconds."""
    found = _DURATION.fullmatch(text.strip().lower())
    if found is None:
        raise InputError(f"--older-than {text[:40]!r}: expected a duration such as 90s, 30m, 24h or 7d")
    return float(found[1]) * _UNIT_SECONDS[found[2]]


def _staging(times: dict[str, float]) -> dict[str, list[str]]:
    """Report folder -> the keys that are staging in it."""
    folders: dict[str, list[str]] = defaultdict(list)
    for key in times:
        folder = "/".join(key.split("/")[:2])
        folders[folder].append(key)
    staging: dict[str, list[str]] = {}
    for folder, keys in folders.items():
        if f"{folder}/{MANIFEST}" in keys:
            keys = [key for key in keys if _TEMPORARY.search(key)]  # only a dead put's leftovers
        if keys:
            staging[folder] = keys
    return staging


def collect_garbage(store: Store, older_than: float, now: float | None = None) -> list[str]:
    """Delete the staging of every report folder whose newest staging object is older than
    `older_than` seconds; returns the deleted keys."""
    cutoff = (time.time() if now is None else now) - older_than
    times = store.modified(REPORTS)
    deleted: list[str] = []
    for keys in _staging(times).values():
        if max(times[key] for key in keys) <= cutoff:
            store.delete(sorted(keys, reverse=True))
            deleted.extend(keys)
    return deleted
