"""The embedded default: a folder on the local disk as the asset store."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import BinaryIO

from handler.errors import StorageError
from handler.storage.base import MANIFEST, REPORT_PARTS, Source, Store, check_id


class LocalSource(Source):
    def __init__(self, path: Path) -> None:
        self._path = path

    @property
    def name(self) -> str:
        return str(self._path)

    @property
    def basename(self) -> str:
        return self._path.name

    def is_dir(self) -> bool:
        return self._path.is_dir()

    def files(self) -> list[Source]:
        return [LocalSource(p) for p in sorted(self._path.rglob("*")) if p.is_file()]

    def open(self) -> BinaryIO:
        try:
            return self._path.open("rb")
        except FileNotFoundError as error:
            raise StorageError(f"{self._path}: no such file") from error
        except OSError as error:
            raise StorageError(f"{self._path}: cannot be read ({error.strerror})") from error


class LocalStore(Store):
    def __init__(self, root: Path) -> None:
        self._root = root

    @property
    def uri(self) -> str:
        return str(self._root)

    def dataset(self, dataset_id: str) -> Source:
        return LocalSource(self._root / "datasets" / check_id(dataset_id, "dataset id"))

    def _report_dir(self, report_id: str) -> Path:
        return self._root / "reports" / check_id(report_id, "report id")

    def write_report(self, report_id: str, parts: dict[str, bytes]) -> None:
        final = self._report_dir(report_id)
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            # Everything goes to a hidden temporary folder first, then one rename publishes it.
            staging = Path(tempfile.mkdtemp(prefix=f".{report_id}.", dir=final.parent))
            try:
                for key, content in parts.items():
                    (staging / REPORT_PARTS[key].name).write_bytes(content)
                manifest = {"report_id": report_id, "parts": [REPORT_PARTS[k].name for k in parts]}
                (staging / MANIFEST.name).write_text(json.dumps(manifest))
                os.replace(staging, final)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
        except OSError as error:
            raise StorageError(
                f"local store {self._root}: cannot write report {report_id}: {error}"
            ) from error

    def read_report_part(self, report_id: str, part: str) -> bytes:
        folder = self._report_dir(report_id)
        if not (folder / MANIFEST.name).is_file():
            raise StorageError(f"local store {self._root}: no report {report_id!r}")
        try:
            return (folder / REPORT_PARTS[part].name).read_bytes()
        except OSError as error:
            raise StorageError(f"local store {self._root}: report {report_id!r} has no {part}") from error
