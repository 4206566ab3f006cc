"""One coordinate frame (SPEC §5): normalised boxes become pixels wherever the size is known."""

from __future__ import annotations

import numpy as np

from handler.boxes import BoolArray, BoxTable, FloatArray
from handler.errors import DatasetError


def scale_to_pixels(boxes: BoxTable, widths: FloatArray, heights: FloatArray) -> BoxTable:
    """Multiply 0-1 coordinates by their image's width and height."""
    scale = np.stack(
        [widths[boxes.image], heights[boxes.image], widths[boxes.image], heights[boxes.image]], axis=1
    )
    return boxes.with_columns(xyxy=boxes.xyxy * scale)


def missing_size_error(source: str, asset_id: str) -> DatasetError:
    return DatasetError(
        f"{source}: asset {asset_id!r} has normalised coordinates but no image width/height, "
        "and the other side is in pixels: expected the image size to convert them"
    )


def to_common_frame(
    source: str,
    boxes: BoxTable,
    normalized: BoolArray,
    widths: FloatArray,
    heights: FloatArray,
    asset_ids: list[str],
) -> tuple[BoxTable, bool]:
    """Boxes in one frame, and whether that frame is normalised.

    Normalised boxes with a known image size become pixels; a dataset whose boxes are all
    normalised and some sizes unknown stays normalised (the pairing converts it later);
    a mix of pixel boxes and normalised boxes of unknown size is an error.
    """
    if not normalized.any():
        return boxes, False
    sized = np.isfinite(widths) & np.isfinite(heights)
    if sized[boxes.image[normalized]].all():
        converted = scale_to_pixels(boxes[normalized], widths, heights)
        xyxy = boxes.xyxy.copy()
        xyxy[normalized] = converted.xyxy
        return boxes.with_columns(xyxy=xyxy), False
    if normalized.all():
        return boxes, True
    unsized = boxes.image[normalized & ~sized[boxes.image]][0]
    raise missing_size_error(source, asset_ids[unsized])
