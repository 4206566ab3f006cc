"""One coordinate frame (SPEC §5): normalised boxes become pixels wherever the size is known."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from handler.boxes import BoolArray, BoxTable, FloatArray
from handler.datasets.skips import SkipLog
from handler.errors import DatasetError


def scale_to_pixels(boxes: BoxTable, widths: FloatArray, heights: FloatArray) -> BoxTable:
    """Multiply 0-1 coordinates by their image's width and height."""
    scale = np.stack(
        [widths[boxes.image], heights[boxes.image], widths[boxes.image], heights[boxes.image]], axis=1
    )
    return boxes.with_columns(xyxy=boxes.xyxy * scale)


# Where a format that cannot carry image sizes takes them from, for the missing-size error.
SIZE_HINTS = {
    "yolo": " (for a YOLO folder: a sizes.json {image name: [width, height]} in it)",
    "prediction-cache": " (a prediction cache takes them from the ground truth)",
    "prediction-cache-jsonl": " (a prediction cache takes them from the ground truth)",
}


def missing_size_error(source: str, asset_id: str, dataset_format: str = "") -> DatasetError:
    return DatasetError(
        f"{source}: asset {asset_id!r} has normalised coordinates but no image width/height, "
        "and the other side is in pixels: expected the image size to convert them"
        + SIZE_HINTS.get(dataset_format, "")
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


def outside_image(boxes: BoxTable, widths: FloatArray, heights: FloatArray, normalized: bool) -> BoolArray:
    """Boxes that do not overlap their image at all (a 1 by 1 image when normalised).

    Only these are defects: a box that sticks out of its image is kept as it is, because it
    can be clipped only where the size is known, and the same boxes must score the same in
    every format. Where the size is unknown nothing is outside.
    """
    width = np.ones(len(boxes)) if normalized else widths[boxes.image]
    height = np.ones(len(boxes)) if normalized else heights[boxes.image]
    x_min, y_min, x_max, y_max = boxes.xyxy.T
    outside: BoolArray = (x_min >= width) | (y_min >= height) | (x_max <= 0) | (y_max <= 0)
    return outside


def skip_outside(
    boxes: BoxTable,
    sizes: tuple[FloatArray, FloatArray],
    normalized: bool,
    skips: SkipLog,
    position: Callable[[int], str],
) -> BoxTable:
    """Drop the boxes outside their image, each counted and listed at `position(source_index)`."""
    widths, heights = sizes
    outside = outside_image(boxes, widths, heights, normalized)
    for row in np.flatnonzero(outside):
        i = boxes.image[row]
        frame = "the 0-1 normalised image" if normalized else f"its {widths[i]:g}x{heights[i]:g} image"
        box = ", ".join(f"{v:g}" for v in boxes.xyxy[row])
        skips.add(position(int(boxes.source_index[row])), f"box [{box}] lies entirely outside {frame}")
    return boxes[~outside]
