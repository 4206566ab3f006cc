"""The report asset: which parts it has, where they live in a store, and how it is read.

Layout under the store: `reports/<id>/findings.json`, `report.html`, ... and `manifest.json`.
A part may instead be written as numbered chunk objects (`ledger/00000.npz`,
`ledger/00001.npz`, ...), e.g. one per shard of the evaluation, read in order.

A report without a manifest does not exist for readers. `handler.report.publish.staging` writes a
report (on a local store under the hidden `reports/.staging-<id>/`, moved into place whole).
What a run that never finished left (SIGKILL, power loss, a cut connection) is staging: a
`.staging-<id>` folder, everything under `reports/<id>/` without `manifest.json`, and the local
store's hidden `.<name>.*.part` files. Staging whose newest object is older than a safe age
cannot belong to a live run; `collect_garbage` deletes it, and every publish runs it.
"""

from __future__ import annotations

import csv
import re
import time
import zipfile
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Final

import orjson

from handler.errors import InputError, StorageError, UserError
from handler.sections.parts import ReportPart
from handler.storage import ObjectNotFound, Store
from handler.storage.base import check_id

MANIFEST: Final = "manifest.json"
MANIFEST_TYPE: Final = "application/json"

REPORTS: Final = "reports/"
STAGING: Final = ".staging-"
# Older than this, staging cannot belong to a live run: no evaluation takes a day.
SAFE_AGE_SECONDS: Final = 24 * 3600
# A temporary file of the local store: `.<name>.<random>.part` beside its target.
_TEMPORARY: Final = re.compile(r"(^|/)\.[^/]+\.part$")
_DURATION: Final = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd]?)")
_UNIT_SECONDS: Final = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


# The per-box ledger (handler/engine/ledger.py): written by the shards, one .npz chunk each,
# before the other parts.
LEDGER: Final = ReportPart("ledger", "ledger.npz", "application/octet-stream")
# What reports held before the ledger, one JSON line per box: still printed by `show --outcomes`.
OUTCOMES: Final = ReportPart("outcomes", "outcomes.jsonl", "application/x-ndjson")
# The findings document (its finisher writes it): `list` and `show` read it without the models.
FINDINGS_PART: Final = ReportPart("findings", "findings.json", "application/json")
# The pre-label candidates (handler/engine/pre_label_boxes.py): one .npz chunk per shard too.
PRE_LABELS: Final = ReportPart("pre_labels", "pre_labels.npz", "application/octet-stream")


def report_folder(report_id: str) -> str:
    return f"{REPORTS}{check_id(report_id, 'report id')}"


def staging_folder(report_id: str) -> str:
    """Where a local store's report is written before it is moved into place: hidden, and
    never a report id (ids do not start with a dot), so no reader takes it for a report."""
    return f"{REPORTS}{STAGING}{check_id(report_id, 'report id')}"


def report_location(store: Store, report_id: str) -> str:
    """Where a human finds the report."""
    return store.url(report_folder(report_id)) + "/"


def is_temporary(key: str) -> bool:
    """A local store's half-written object (a put that never finished)."""
    return _TEMPORARY.search(key) is not None


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
    manifests = (key.split("/") for key in store.list(REPORTS))
    return sorted(
        {
            parts[1]
            for parts in manifests
            if len(parts) == 3 and parts[2] == MANIFEST and not parts[1].startswith(STAGING)
        },
        reverse=True,
    )


def latest_report(store: Store) -> str:
    listed = list_reports(store)
    if not listed:
        raise StorageError(f"{store.uri}: no report yet (run prelabel-eval GT PRED first)")
    return listed[0]


# What a parser raises on damaged bytes (JSON, pydantic, CSV, numpy's .npz, a field missing).
PARSE_ERRORS: Final = (
    ValueError,
    KeyError,
    TypeError,
    IndexError,
    EOFError,
    OSError,
    csv.Error,
    zipfile.BadZipFile,
)


@contextmanager
def reading_part(report_id: str, part: ReportPart) -> Iterator[None]:
    """Parsing a stored part: whatever a damaged object makes the parser raise becomes one
    StorageError line naming the report and the part (a user's error stays as it is)."""
    try:
        yield
    except UserError:
        raise
    except (
        ValueError,
        KeyError,
        TypeError,
        IndexError,
        EOFError,
        OSError,
        csv.Error,
        zipfile.BadZipFile,
    ) as error:
        said = (str(error).splitlines() or [""])[0][:120]
        raise StorageError(
            f"report {report_id!r}: its {part.name} is damaged ({type(error).__name__}: {said})"
        ) from None


def has_part(store: Store, report_id: str, part: ReportPart) -> bool:
    """Whether a published report holds `part` (a StorageError line when there is no such report)."""
    return bool(part.objects(_manifest(store, report_folder(report_id), report_id)))


def report_chunks(store: Store, report_id: str, part: ReportPart, why_absent: str = "") -> Iterator[bytes]:
    """The objects of one part of a published report, in order, each read when asked for; a
    StorageError line when absent (ending with `why_absent`, when the caller knows why it may be)."""
    folder = report_folder(report_id)
    names = part.objects(_manifest(store, folder, report_id))
    if not names:
        raise StorageError(f"{store.uri}: report {report_id!r} has no {part.key} {why_absent}".rstrip())
    return (_get(store, f"{folder}/{name}", report_id) for name in names)


def read_report_chunks(store: Store, report_id: str, part: ReportPart, why_absent: str = "") -> list[bytes]:
    """The objects of one part of a published report, in order, read at once (`report_chunks`)."""
    return list(report_chunks(store, report_id, part, why_absent))


def read_report_part(store: Store, report_id: str, part: ReportPart) -> bytes:
    """One part of a published report, its chunks joined; a StorageError line when absent."""
    return b"".join(read_report_chunks(store, report_id, part))


def parse_duration(text: str) -> float:
    """`90`, `90s`, `30m`, `24h`, `7d` -> seconds."""
    found = _DURATION.fullmatch(text.strip().lower())
    if found is None:
        raise InputError(f"--older-than {text[:40]!r}: expected a duration such as 90s, 30m, 24h or 7d")
    return float(found[1]) * _UNIT_SECONDS[found[2]]


def _staging(keys: Iterable[str]) -> dict[str, list[str]]:
    """Report folder -> the keys that are staging in it."""
    folders: dict[str, list[str]] = defaultdict(list)
    for key in keys:
        folder = "/".join(key.split("/")[:2])
        folders[folder].append(key)
    staging: dict[str, list[str]] = {}
    for folder, listed in folders.items():
        published = f"{folder}/{MANIFEST}" in listed and not folder.startswith(REPORTS + STAGING)
        if published:
            listed = [key for key in listed if is_temporary(key)]  # only a dead put's leftovers
        if listed:
            staging[folder] = listed
    return staging


def collect_garbage(store: Store, older_than: float, now: float | None = None) -> list[str]:
    """Delete the staging of every report folder whose newest staging object is older than
    `older_than` seconds; returns the deleted keys."""
    cutoff = (time.time() if now is None else now) - older_than
    entries = store.entries(REPORTS)
    deleted: list[str] = []
    for keys in _staging(entries).values():
        if max(entries[key].modified for key in keys) <= cutoff:
            store.delete(sorted(keys, reverse=True))
            deleted.extend(keys)
    return deleted
