"""A report's part as a finisher declares it and the store keeps it (handler/report/publish/)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

import msgspec


class ReportPart(msgspec.Struct, frozen=True):
    """One part of a report: the key `show` names it by, its file name and its content type.

    The ledger is the part the shards write (`LEDGER`); every other part is declared by
    the finisher that writes it (handler/sections/finishing.py)."""

    key: str
    name: str
    content_type: str

    def chunk(self, index: int) -> str:
        path = PurePosixPath(self.name)
        return f"{path.stem}/{index:05d}{path.suffix}"

    def objects(self, listed: Iterable[str]) -> list[str]:
        """The objects of a manifest that hold this part, in the order they were written."""
        folder = f"{PurePosixPath(self.name).stem}/"
        return [name for name in listed if name == self.name or name.startswith(folder)]
