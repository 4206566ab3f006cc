"""The pictures behind the page's sketches: only the few images drawn are read and decoded.

Each is looked up in the root's listing, read (at most MAX_IMAGE_BYTES), and made a thumbnail
on a few threads (an S3 read waits on the network; Pillow decodes with the GIL released).
Whatever goes wrong with one picture is its note, drawn on its sketch; nothing stops the run.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Final

import msgspec
from msgspec import field

from handler.errors import StorageError
from handler.images.source import ImagesRoot
from handler.images.thumbnail import MAX_IMAGE_BYTES, Thumbnail, Unreadable, pillow_missing, thumbnail

READ_THREADS: Final = 8
# The pipeline's phase that draws them: a phase of its own, its time is not the evaluation's.
DRAW_IMAGES: Final = "draw images"


class Picture(msgspec.Struct, frozen=True):
    """One asset's image as the page draws it: its thumbnail, or a note saying why there is none."""

    where: str  # the file read, or the root it was looked for in
    thumbnail: Thumbnail | None = None
    note: str | None = None


class Pictures(msgspec.Struct, frozen=True):
    """The run's images: where from, and each sketched asset's picture (none at all: `note`).
    The empty value (no `root`) is a run without images."""

    root: str = ""
    found_by: str = ""
    by_asset: Mapping[str, Picture] = field(default_factory=dict)
    note: str | None = None  # why no picture is drawn at all (Pillow is not installed)


def _picture(root: ImagesRoot, asset_id: str) -> Picture:
    try:
        found = root.find(asset_id, MAX_IMAGE_BYTES)
    except LookupError as missing:
        return Picture(root.source.name, note=f"not found: {missing}")
    except StorageError as error:
        return Picture(root.source.name, note=f"cannot be read ({error})")
    if found.content is None:
        return Picture(found.file.name, note=f"more than the {MAX_IMAGE_BYTES:,} bytes read at most")
    try:
        return Picture(found.file.name, thumbnail(found.content))
    except Unreadable as why:
        return Picture(found.file.name, note=str(why))


def draw_pictures(root: ImagesRoot, asset_ids: Collection[str]) -> Pictures:
    """The pictures of `asset_ids` under `root` (none, and a note, without Pillow)."""
    missing = pillow_missing()
    if missing is not None:
        return Pictures(root.source.name, root.found_by, {}, missing)
    ordered = sorted(asset_ids)
    with ThreadPoolExecutor(max_workers=READ_THREADS) as pool:
        drawn = dict(zip(ordered, pool.map(lambda asset_id: _picture(root, asset_id), ordered), strict=True))
    return Pictures(root.source.name, root.found_by, drawn)
