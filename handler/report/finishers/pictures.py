"""The pictures behind the sketches: the images the page lists, read, decoded and made small.

The images are the sketches' own (`listed_images`); where they are is the IMAGES input (checked
by the pipeline before the datasets are read), else the folder the GT's format names beside its
labels. A phase of its own, "draw images": its time is not the evaluation's (contract §11).
"""

from __future__ import annotations

from typing import Final

from handler.images.pictures import DRAW_IMAGES, Pictures, draw_pictures
from handler.images.source import found_root, given_root
from handler.inputs import IMAGES_KEY
from handler.report.finishers.image_sketches import listed_images
from handler.report.finishing import MERGED, Finished, Finisher, Finishing


def _pictures(finishing: Finishing) -> Finished:
    merged = finishing.merged
    listed = sorted(listed_images(merged))
    given = merged.inputs.images
    root = given_root(given, IMAGES_KEY) if given else found_root(merged.gt.source, merged.gt.format, listed)
    return Finished(data=None if root is None else draw_pictures(root, listed))


PICTURES: Final = Finisher("pictures", MERGED, _pictures, phase=DRAW_IMAGES)

__all__ = ["DRAW_IMAGES", "PICTURES", "Pictures"]
