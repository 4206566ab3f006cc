"""Where a run's images are: a folder or `s3://` prefix given (`--images`, IMAGES), or the one
a format names beside its labels (a YOLO folder's `images/`, a VOC folder's `JPEGImages/`).

The root is listed once; an asset's image is the file whose path, or else whose name, less an
image extension, is the asset id's (`a`, `a.jpg` and `train/a.png` meet). Nothing is read here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property

from handler.datasets import images_folder
from handler.datasets.assetnames import IMAGE_EXTENSIONS, asset_key
from handler.errors import InputError, StorageError, quoted
from handler.storage import Source, open_source


@dataclass(frozen=True)
class ImagesRoot:
    """A folder of images and how it was chosen (`given`, `beside the yolo labels`)."""

    source: Source
    found_by: str

    @cached_property
    def files(self) -> ImageFiles:
        return ImageFiles(self.source)


class ImageFiles:
    """The image files under a root, by path and by name, less the image extension."""

    def __init__(self, root: Source) -> None:
        self._by_path: dict[str, Source] = {}
        self._by_name: dict[str, list[Source]] = {}
        prefix = root.name.rstrip("/\\")
        for file in root.files():
            if os.path.splitext(file.basename)[1].lower() not in IMAGE_EXTENSIONS:
                continue
            relative = file.name[len(prefix) :].lstrip("/\\").replace("\\", "/")
            self._by_path.setdefault(asset_key(relative), file)
            self._by_name.setdefault(asset_key(file.basename), []).append(file)

    def __len__(self) -> int:
        return len(self._by_path)

    def find(self, asset_id: str) -> Source:
        """The image of `asset_id`; a LookupError says why there is none."""
        key = asset_key(asset_id.replace("\\", "/").lstrip("/"))
        if key in self._by_path:
            return self._by_path[key]
        named = self._by_name.get(key.rsplit("/", 1)[-1], [])
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
    """`dataset/images`, then the path with its last `labels` folder named `images` instead, then
    the dataset folder itself (images beside their label files)."""
    found = [_child(dataset, images)]
    parts = dataset.rstrip("/").split("/")
    if labels in parts:
        at = len(parts) - 1 - parts[::-1].index(labels)
        found.append("/".join([*parts[:at], images, *parts[at + 1 :]]))
    return [*found, dataset]


def found_root(dataset: str, format_name: str) -> ImagesRoot | None:
    """The images folder the GT's format names beside its labels, when one holds images; else None.

    Only the GT's side is looked at: a prediction folder's images (Ultralytics' `predict/`) have
    the predictions drawn on them.
    """
    where = images_folder(format_name)
    if where is None:
        return None
    for candidate in _candidates(dataset, where.labels, where.name):
        try:
            root = ImagesRoot(open_source(candidate), f"beside the {format_name} labels")
            if root.source.is_dir() and len(root.files):
                return root
        except StorageError:
            continue  # a folder that cannot be listed is one without images: nothing is drawn
    return None
