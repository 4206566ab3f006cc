"""How assets of two datasets, and side files such as `sizes.json`, meet: by name less an image extension."""

from __future__ import annotations

import os
from typing import Final

IMAGE_EXTENSIONS: Final = {".jpg", ".jpeg", ".png", ".bmp", ".gif", ".tif", ".tiff", ".webp"}


def asset_key(asset_id: str) -> str:
    """The join key: the name without an image extension (`a.jpg` and YOLO's `a` meet)."""
    stem, extension = os.path.splitext(asset_id)
    return stem if extension.lower() in IMAGE_EXTENSIONS else asset_id
