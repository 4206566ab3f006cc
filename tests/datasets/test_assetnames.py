"""Assets meet by name less an image extension: `os.path.splitext`'s extension, exactly."""

from __future__ import annotations

import itertools
import os

from handler.datasets.assetnames import IMAGE_EXTENSIONS, asset_key

# Pieces whose joins cover hidden files, dotted folders, case, names of only dots, other extensions.
_PIECES = ("a", ".", "..", "/", "jpg", "JPG", ".jpeg", "png", "tif", "x")


def _by_splitext(asset_id: str) -> str:
    stem, extension = os.path.splitext(asset_id)
    return stem if extension.lower() in IMAGE_EXTENSIONS else asset_id


def test_the_key_drops_the_extension_splitext_finds() -> None:
    names = ["".join(p) for k in range(1, 6) for p in itertools.product(_PIECES, repeat=k)]
    assert [asset_key(n) for n in names] == [_by_splitext(n) for n in names]
    assert [asset_key(n) for n in ("a.JPG", "d/a.b.png", ".jpg", "d/..jpg", "a.txt")] == [
        "a",
        "d/a.b",
        ".jpg",
        "d/..jpg",
        "a.txt",
    ]
