"""What a format module exposes: one `Format` record, listed once in `reading.FORMATS`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from handler.datasets.loaded import Loaded
from handler.datasets.read_options import ReadOptions

# What `read` is given: a parsed JSON document, `LineRecords` of JSON Lines, or a `Folder`.
Kind = Literal["json", "jsonl", "folder"]


@dataclass(frozen=True)
class Format:
    """A dataset format: its name, how it is detected and how it reads.

    `accepts(content)` and `read(where, content, reference)` are given the content of `kind`;
    `reference` is the GT when this is the prediction side (None for the GT itself).
    A format that `takes` read options ("names", "layout") reads with `read_with`, given them too.
    """

    name: str
    kind: Kind
    accepts: Callable[[Any], bool]
    read: Callable[[str, Any, Loaded | None], Loaded]
    read_with: Callable[[str, Any, Loaded | None, ReadOptions], Loaded] | None = None
    takes: frozenset[str] = field(default_factory=frozenset)

    def read_as(self, where: str, content: Any, reference: Loaded | None, options: ReadOptions) -> Loaded:
        """`read`, or `read_with` when options are given (one this format cannot use is an error)."""
        options.refuse(self.name, self.takes)
        if not options.given() or self.read_with is None:
            return self.read(where, content, reference)
        return self.read_with(where, content, reference, options)

    def __post_init__(self) -> None:
        if self.takes and self.read_with is None:
            raise TypeError(f"format {self.name!r} takes {sorted(self.takes)} but has no read_with")
