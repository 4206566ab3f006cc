"""What a format module exposes: one `Format` record, listed once in `reading.FORMATS`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from handler.datasets.loaded import Loaded

# What `read` is given: a parsed JSON document, `LineRecords` of JSON Lines, or a `Folder`.
Kind = Literal["json", "jsonl", "folder"]


@dataclass(frozen=True)
class Format:
    """A dataset format: its name, how it is detected and how it reads.

    `accepts(content)` and `read(where, content, reference)` are given the content of `kind`;
    `reference` is the GT when this is the prediction side (None for the GT itself).
    """

    name: str
    kind: Kind
    accepts: Callable[[Any], bool]
    read: Callable[[str, Any, Loaded | None], Loaded]
