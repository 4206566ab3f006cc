"""Where a run's images are: a folder or `s3://` prefix given (`--images`, IMAGES), or the one
a format names beside its labels (a YOLO folder's `images/`, a VOC folder's `JPEGImages/`).

An asset's image is first looked for where its id says: the id itself under the root (a COCO
`file_name`), then the id with each image extension (YOLO's `a` → `a.jpg`). Only for an asset not
found so is the root listed, once, and the one file of its name taken (`train/a.jpg` for `a`):
a root of many images costs no listing when the ids name the files.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import cached_property
from typing import Final

import msgspec

from handler.datasets import images_folder
from handler.datasets.assetnames import IMAGE_EXTENSIONS, asset_key
from handler.errors import InputError, StorageError, quoted
from handler.storage import ObjectNotFound, Source, open_source

# The extensions tried after the id itself, the usual first; upper case is a camera's.
PROBED_EXTENSIONS: Final = (
    ".jpg",
    ".png",
    ".jpeg",
    ".JPG",
    ".PNG",
    ".JPEG",
    ".webp",
    ".bmp",
    ".tif",
    ".tiff",
)


class Found(msgspec.Struct, frozen=True):
    """An asset's image file and its content (None: more than the bytes read at most)."""

    file: Source
    content: bytes | None


def _probes(asset_id: str) -> list[str]:
    """The paths under the root where `asset_id`'s image may be, by its id alone. An id that could
    leave the root (`..`, an absolute path) names none: a dataset must not pick the page's pictures
    from elsewhere on the machine or in the bucket."""
    relative = asset_id.replace("\\", "/")
    if relative.startswith("/") or ".." in relative.split("/") or ":" in relative:
        return []
    stem = asset_key(relative)
    named = [relative] if stem != relative else []
    return named + [stem + extension for extension in PROBED_EXTENSIONS if stem + extension != relative]


class ImagesRoot(msgspec.Struct, frozen=True, dict=True):
    """A folder of images and how it was chosen (`given`, `beside the yolo labels`)."""

    source: Source
    found_by: str

    def probe(self, asset_id: str, limit: int) -> Found | None:
        """The image where `asset_id` names it, None when there is none there."""
        for relative in _probes(asset_id):
            file = self.source.child(relative)
            try:
                return Found(file, file.read_at_most(limit))
            except ObjectNotFound:
                continue
        return None

    def find(self, asset_id: str, limit: int) -> Found:
        """The image of `asset_id`, by its id, else by its name in the listing; a LookupError says
        why there is none, a StorageError that it could not be read."""
        found = self.probe(asset_id, limit)
        if found is not None:
            return found
        file = self.files.find(asset_id)
        return Found(file, file.read_at_most(limit))

    @cached_property
    def files(self) -> ImageFiles:
        return ImageFiles(self.source)


class ImageFiles:
    """The image files under a root, by name less the image extension."""

    def __init__(self, root: Source) -> None:
        self._by_name: dict[str, list[Source]] = {}
        for file in root.files():
            if os.path.splitext(file.basename)[1].lower() in IMAGE_EXTENSIONS:
                self._by_name.setdefault(asset_key(file.basename), []).append(file)

    def find(self, asset_id: str) -> Source:
        named = self._by_name.get(asset_key(asset_id.replace("\\", "/").rsplit("/", 1)[-1]), [])
        if len(named) > 1:
            raise LookupError(f"{len(named)} images named {quoted(named[0].basename)} in the folder")
        if not named:
            raise LookupError("no image of that name in the folder")
        return named[0]


def given_root(reference: str, key: str) -> ImagesRoot:
    """The folder the input `key` (IMAGES) names; one that is no folder is an error naming `key`."""
    try:
        source = open_source(reference)
        is_folder = source.is_dir()
    except StorageError as error:
        raise InputError(f"{quoted(reference)}: {error}", key) from None
    if not is_folder:
        raise InputError(f"{quoted(reference)}: no such folder: expected a folder of images", key)
    return ImagesRoot(source, "given")


def _child(folder: str, name: str) -> str:
    return f"{folder.rstrip('/')}/{name}"


def _candidates(dataset: str, labels: str, images: str) -> list[str]:
    """`dataset/images`, then the path with its last `labels` folder named `images` instead."""
    found = [_child(dataset, images)]
    parts = dataset.rstrip("/").split("/")
    if labels in parts:
        at = len(parts) - 1 - parts[::-1].index(labels)
        found.append("/".join([*parts[:at], images, *parts[at + 1 :]]))
    return found


def found_root(dataset: str, format_name: str, asset_ids: Sequence[str]) -> ImagesRoot | None:
    """The images folder the GT's format names beside its labels, else the dataset folder itself
    when it holds the image of one of `asset_ids` (images beside their label files); else None.

    Only the GT's side is looked at: a prediction folder's images (Ultralytics' `predict/`) have
    the predictions drawn on them.
    """
    where = images_folder(format_name)
    if where is None:
        return None
    by_itself = f"beside the {format_name} labels"
    try:
        for candidate in _candidates(dataset, where.labels, where.name):
            source = open_source(candidate)
            if source.is_dir():
                return ImagesRoot(source, by_itself)
        beside = ImagesRoot(open_source(dataset), by_itself)
        if beside.source.is_dir() and any(beside.probe(asset_id, 0) for asset_id in asset_ids[:3]):
            return beside
    except StorageError:
        pass  # a folder that cannot be looked at is one without images: nothing is drawn
    return None
