"""The storage interface every backend implements, and the rules they share."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import BinaryIO, Final

from handler.errors import StorageError


@dataclass(frozen=True)
class ReportPart:
    name: str
    content_type: str


# The parts of a report asset, written in this order; the manifest last makes it visible.
REPORT_PARTS: Final = {
    "findings": ReportPart("findings.json", "application/json"),
    "html": ReportPart("report.html", "text/html; charset=utf-8"),
    "outcomes": ReportPart("outcomes.jsonl", "application/x-ndjson"),
}
MANIFEST: Final = ReportPart("manifest.json", "application/json")

# Report and dataset ids are single path segments: no separators, no "..", not hidden.
_ID_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")


def check_id(value: str, what: str) -> str:
    """Refuse an id that could escape its folder in the store."""
    if not _ID_PATTERN.fullmatch(value) or ".." in value:
        raise StorageError(
            f"{what} {value!r} is not a valid id: expected letters, digits, '.', '_' or '-' (no '/', no '..')"
        )
    return value


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
    def files(self) -> list[Source]:
        """Every file under this folder, recursively, sorted by name."""

    @abstractmethod
    def open(self) -> BinaryIO:
        """A binary stream of the file's content."""

    def read_bytes(self) -> bytes:
        with self.open() as stream:
            return stream.read()


class Store(ABC):
    """An asset store: report assets under `reports/<id>/`, datasets under `datasets/<id>/`."""

    @property
    @abstractmethod
    def uri(self) -> str: ...

    @abstractmethod
    def dataset(self, dataset_id: str) -> Source:
        """The folder `datasets/<id>/` of this store (the id already checked)."""

    @abstractmethod
    def write_report(self, report_id: str, parts: dict[str, bytes]) -> None:
        """Write every part of `REPORT_PARTS`, then the manifest; visible only when complete."""

    @abstractmethod
    def read_report_part(self, report_id: str, part: str) -> bytes:
        """One part of a complete report; `FileNotFoundError`-like StorageError when absent."""

    def location(self, report_id: str) -> str:
        """Where a human finds the report."""
        return f"{self.uri.rstrip('/')}/reports/{report_id}/"
