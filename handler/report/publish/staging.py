"""One report's life, from its id to its publish or its discard: `staged_report`.

The report is written under a staging folder: on a store that renames folders in one step
(a local folder) the hidden `reports/.staging-<id>/`, moved into place as `reports/<id>/` once
complete, so a reader sees the whole report or nothing; on S3, which cannot rename, the report
folder itself, parts first and the manifest last (a folder without one is no report). Outcome
chunks come from workers anywhere (other processes, dask workers): each gets a picklable
`ObjectSink` and reports back what it wrote. Before the manifest is written, every object it
will list must be in the store with the size and count its writer reported, else nothing is
published. Whatever stops a run (an error, SIGTERM, SIGINT), `staged_report` discards what
the report wrote; only SIGKILL leaves staging, which `collect_garbage` removes later.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from datetime import datetime, timezone

import orjson

from handler.engine.npz_chunks import StreamedChunk
from handler.errors import StorageError
from handler.report.publish.asset import (
    LEDGER,
    MANIFEST,
    MANIFEST_TYPE,
    PRE_LABELS,
    SAFE_AGE_SECONDS,
    collect_garbage,
    is_temporary,
    report_folder,
    staging_folder,
)
from handler.sections.parts import ReportPart
from handler.storage import AccessDenied, Content, ObjectSink, Piece, SizedContent, Store, WrittenObject


def new_report_id() -> str:
    """Sortable by creation time, unique without coordination: the UTC second, then its
    nanoseconds, so the reports of one second still sort in order (`show latest` after a script's
    quick runs)."""
    seconds, nanoseconds = divmod(time.time_ns(), 10**9)
    when = datetime.fromtimestamp(seconds, timezone.utc)
    return f"rpt_{when:%Y%m%dT%H%M%S}{nanoseconds:09d}_{secrets.token_hex(4)}"


class _Counted:
    """Streamed content, counting the bytes as the store takes them."""

    def __init__(self, chunks: Iterable[Piece]) -> None:
        self._chunks = chunks
        self.size = 0

    def __iter__(self) -> Iterator[Piece]:
        for chunk in self._chunks:
            self.size += len(chunk)
            yield chunk


def _cannot_write(report_id: str, error: StorageError) -> StorageError:
    return StorageError(f"cannot write report {report_id!r}: {error}")


def _already_published(store: Store, report_id: str) -> bool:
    try:
        return store.exists(f"{report_folder(report_id)}/{MANIFEST}")
    except AccessDenied:
        return False  # a write-only role cannot look; the upload itself will say if it may write
    except StorageError as error:
        raise _cannot_write(report_id, error) from error


class ReportStaging:
    """A report being written: its id, its part keys, the sinks for its ledger chunks, the
    check before its manifest, and (called by `staged_report` only) its discard."""

    def __init__(self, store: Store, report_id: str) -> None:
        self.store = store
        self.report_id = report_id
        self._final = report_folder(report_id)
        self._folder = staging_folder(report_id) if store.renames_folders else self._final
        self._chunks: dict[str, list[ObjectSink]] = {}  # part key -> its chunks' sinks

    def _key(self, name: str) -> str:
        return f"{self._folder}/{name}"

    def ledger_sinks(self, count: int) -> list[ObjectSink]:
        """One sink per ledger chunk, in order (one per shard)."""
        return self._chunk_sinks(LEDGER, count)

    def pre_label_sinks(self, count: int) -> list[ObjectSink]:
        """One sink per chunk of pre-label candidates, in order (one per shard)."""
        return self._chunk_sinks(PRE_LABELS, count)

    def _chunk_sinks(self, part: ReportPart, count: int) -> list[ObjectSink]:
        sinks = [
            ObjectSink(self.store.uri, self._key(part.chunk(i)), part.content_type) for i in range(count)
        ]
        self._chunks[part.key] = sinks
        return sinks

    @property
    def _sinks(self) -> list[ObjectSink]:
        """Every chunk sink handed out, part by part in the order asked for."""
        return [sink for sinks in self._chunks.values() for sink in sinks]

    def rewrite_chunks(
        self,
        chunks: Sequence[WrittenObject],
        edit: Callable[[bytes | StreamedChunk], bytes | SizedContent],
        part: ReportPart,
        held: Mapping[str, StreamedChunk],
    ) -> tuple[WrittenObject, ...]:
        """The chunks of `part` written again through `edit`, one at a time (after the run
        learned something): those `held` in this process written for the first time, the others
        read back; a chunk written already that `edit` gives back as it was is left as it is."""
        rewritten = []
        for chunk in chunks:
            kept = held.get(chunk.key)
            written = self.store.get(chunk.key) if kept is None else kept
            content = edit(written)
            if kept is not None or content is not written:
                self.store.put(chunk.key, content, part.content_type)
            rewritten.append(WrittenObject(chunk.key, len(content)))
        return tuple(rewritten)

    def publish(self, parts: Mapping[ReportPart, Content], chunks: Sequence[WrittenObject] = ()) -> None:
        """Write `parts` beside the `chunks` (the ledger, pre-label candidates) the workers
        reported, check them all, write the manifest, move the report into place."""
        try:
            listed = self._write_parts(parts, chunks)
            self._check(listed)
            manifest = orjson.dumps({"report_id": self.report_id, "parts": list(listed)})
            self.store.put(self._key(MANIFEST), manifest, MANIFEST_TYPE)
            if self._folder != self._final:
                self.store.rename_folder(self._folder, self._final)
        except StorageError as error:
            raise _cannot_write(self.report_id, error) from error
        with suppress(StorageError):  # the report is out; old staging is housekeeping
            collect_garbage(self.store, SAFE_AGE_SECONDS)

    def _write_parts(
        self, parts: Mapping[ReportPart, Content], chunks: Sequence[WrittenObject]
    ) -> dict[str, int]:
        """The manifest's names and sizes in the order they were written: the ledger and pre-label
        chunks (the shards wrote them), then each part in the order given."""
        listed = self._reported(chunks) if self._sinks or chunks else {}
        for part, content in parts.items():
            if part.objects(listed):
                raise KeyError(f"report part {part.key!r} is written twice")
            counted = content if isinstance(content, bytes) else _Counted(content)
            self.store.put(self._key(part.name), counted, part.content_type)
            listed[part.name] = len(counted) if isinstance(counted, bytes) else counted.size
        return listed

    def _reported(self, chunks: Sequence[WrittenObject]) -> dict[str, int]:
        """The chunks by name, once each sink has reported its chunk exactly once."""
        expected = [sink.key for sink in self._sinks]
        if sorted(chunk.key for chunk in chunks) != sorted(expected):
            raise StorageError(
                f"{len(chunks)} chunks were reported written, expected one from each of "
                f"{len(expected)} sinks (ledger and pre-label chunks, one of each per shard)"
            )
        sizes = {chunk.key: chunk.size for chunk in chunks}
        start = len(self._folder) + 1
        return {key[start:]: sizes[key] for key in expected}

    def _check(self, listed: Mapping[str, int]) -> None:
        """Every object the manifest will list is in the store, with the size its writer wrote."""
        found = {
            key[len(self._folder) + 1 :]: entry.size
            for key, entry in self.store.entries(self._folder).items()
            if not is_temporary(key)
        }
        for name, size in listed.items():
            if found.get(name) != size:
                held = "none" if name not in found else f"{found[name]} bytes"
                raise StorageError(
                    f"{self.store.url(self._key(name))}: expected {size} bytes as written, the store "
                    f"holds {held} (does the store's URI reach the same objects from every worker?)"
                )
        if len(found) != len(listed):
            strays = sorted(set(found) - set(listed))
            raise StorageError(f"{self.store.url(self._folder)}/: objects no writer reported: {strays}")

    def discard(self) -> None:
        """Delete whatever this report wrote, wherever it got to, manifests first (best effort).

        Listed, so a chunk whose writer never reported back goes too; the keys handed out are
        deleted even when unlisted, which also removes the local folders they were put in."""
        keys = [self._key(MANIFEST), *(sink.key for sink in self._sinks)]
        for folder in dict.fromkeys([self._final, self._folder]):
            with suppress(StorageError):
                keys.extend(self.store.list(folder))
        manifests = [key for key in keys if key.endswith(f"/{MANIFEST}")]
        with suppress(StorageError):
            self.store.delete(dict.fromkeys([*manifests, *sorted(keys, reverse=True)]))


@contextmanager
def staged_report(store: Store, report_id: str | None = None) -> Iterator[ReportStaging]:
    """A new report (a fresh id unless given); anything raised inside discards what it wrote."""
    staging = ReportStaging(store, new_report_id() if report_id is None else report_id)
    if _already_published(store, staging.report_id):
        raise StorageError(
            f"report {staging.report_id!r} already exists in {store.uri}; it is not overwritten"
        )
    try:
        yield staging
    except BaseException:
        staging.discard()
        raise
