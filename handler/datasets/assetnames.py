"""How assets of two datasets, and side files such as `sizes.json`, meet: by name less an image extension."""

from __future__ import annotations

from typing import Final

IMAGE_EXTENSIONS: Final = {".jpg", ".jpeg", ".png", ".bmp", ".gif", ".tif", ".tiff", ".webp"}
_SUFFIXES: Final = {extension[1:] for extension in IMAGE_EXTENSIONS}  # without the dot


def asset_key(asset_id: str) -> str:
    """The join key: the name without an image extension (`a.jpg` and YOLO's `a` meet).

    The extension is `os.path.splitext`'s (from the last dot of the file name on, unless only
    dots precede it: `.jpg` is a name), found with string methods, which are faster: a run pairs
    every asset of both sides.
    """
    stem, dot, suffix = asset_id.rpartition(".")
    if not dot or suffix.lower() not in _SUFFIXES:  # no suffix has a "/": the dot is in the file name
        return asset_id
    named = stem.rstrip(".")  # the file name holds more than dots when one is left before any "/"
    return stem if named and named[-1] != "/" else asset_id
