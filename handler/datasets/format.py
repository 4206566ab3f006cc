"""What a format module exposes: one `Format` record, listed once in `reading.FORMATS`.

Everything the rest of the node needs to know about a format is a field of its record, so
that no code outside `handler/datasets/` names a format.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Literal

import msgspec
from msgspec import field

from handler.datasets.loaded import Loaded
from handler.datasets.read_options import ReadOptions
from handler.storage import Source

# What `read` is given: a parsed JSON document, `LineRecords` of JSON Lines, or a `Folder`.
Kind = Literal["json", "jsonl", "folder"]
# Where class names come from, for a format that says nothing more specific.
ANY_NAMES_FILE: Final = "a class-names file"


class ImagesFolder(msgspec.Struct, frozen=True):
    """Where a format keeps the images its label files describe: the folder `name` inside the
    dataset folder, or in place of the `labels` folder of its path (YOLO's `labels/train` beside
    `images/train`, VOC's `Annotations` beside `JPEGImages`)."""

    name: str
    labels: str


class Format(msgspec.Struct, frozen=True):
    """A dataset format: its name, how it is detected and how it reads, and what it advises.

    `accepts(content)` and `read(where, content, reference)` are given the content of `kind`;
    `reference` is the GT when this is the prediction side (None for the GT itself).
    `names_from` says where a dataset of this format gets class names, the fix when its
    classes are numeric ids; `sizes_from` where it gets image sizes, when it cannot write
    them (empty: nowhere else). `decode(source, content, workers)` (JSON only) is a faster
    decoding of a file this format reads, None when the content is not of its shape: large files
    take it instead of the plain JSON parser. `stream(source, workers)` gives what `decode`
    would, for a big file it reads in ranges without the driver ever holding it whole (None:
    read it whole). `workers` is how many local processes the reading may use: what `decode` and
    `stream` give carries it to `read`.
    A `reads_shards` format (JSON Lines only) is the one in which workers read a dataset's
    shard files on their own.
    A format that `takes` read options ("names", "layout") reads with `read_with`, given them too.
    `images` says where its images are, when the format has a convention for it.
    """

    name: str
    kind: Kind
    accepts: Callable[[Any], bool]
    read: Callable[[str, Any, Loaded | None], Loaded]
    names_from: str = ANY_NAMES_FILE
    sizes_from: str = ""
    decode: Callable[[Source, bytes, int], Any | None] | None = None
    stream: Callable[[Source, int], Any | None] | None = None
    reads_shards: bool = False
    read_with: Callable[[str, Any, Loaded | None, ReadOptions], Loaded] | None = None
    takes: frozenset[str] = field(default_factory=frozenset)
    images: ImagesFolder | None = None

    def read_as(self, where: str, content: Any, reference: Loaded | None, options: ReadOptions) -> Loaded:
        """`read`, or `read_with` when options are given (one this format cannot use is an error)."""
        options.refuse(self.name, self.takes)
        if not options.given() or self.read_with is None:
            return self.read(where, content, reference)
        return self.read_with(where, content, reference, options)

    def __post_init__(self) -> None:
        if self.takes and self.read_with is None:
            raise TypeError(f"format {self.name!r} takes {sorted(self.takes)} but has no read_with")
