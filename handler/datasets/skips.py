"""Per-box defects: skipped, counted, and the first few listed in the report."""

from __future__ import annotations

from dataclasses import dataclass, field

from handler.boxes import SkippedBox

LISTED_SKIPS = 20


@dataclass
class SkipLog:
    source: str
    listed: list[SkippedBox] = field(default_factory=list)
    count: int = 0

    def add(self, position: str, problem: str) -> None:
        self.count += 1
        if len(self.listed) < LISTED_SKIPS:
            self.listed.append(SkippedBox(self.source, position, problem))
