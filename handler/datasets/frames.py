"""One coordinate frame (contract §5): normalised boxes become pixels wherever the size is known."""

from __future__ import annotations

import numpy as np

from handler.boxes import BoolArray, BoxTable, FloatArray
from handler.engine.rotated import corners, rectangles
from handler.errors import DatasetError, quoted


def scale_to_pixels(boxes: BoxTable, widths: FloatArray, heights: FloatArray) -> BoxTable:
    """Multiply 0-1 coordinates by their image's width and height; a rotated box's corners (a
    quadrilateral's own) are scaled and the rectangle holding them taken (the same one when the
    image is square)."""
    scale = np.stack(
        [widths[boxes.image], heights[boxes.image], widths[boxes.image], heights[boxes.image]], axis=1
    )
    xyxy, angle = boxes.xyxy * scale, boxes.angle
    turned = boxes.turned
    if turned.any():
        angle = angle.copy()
        shapes = corners(boxes.xyxy[turned], angle[turned])
        quadrilateral = boxes.quadrilateral[turned]
        shapes[quadrilateral] = boxes.quad_corners[turned][quadrilateral]
        xyxy[turned], angle[turned] = rectangles(shapes * scale[turned, None, :2])
    return boxes.with_columns(xyxy=xyxy, angle=angle, quads=None)


def missing_size_error(source: str, asset_id: str, sizes_from: str = "") -> DatasetError:
    """`sizes_from`: where the dataset's format takes image sizes from (`Format.sizes_from`)."""
    return DatasetError(
        f"{source}: asset {quoted(asset_id)} has normalised coordinates but no image width/height, "
        "and the other side is in pixels: expected the image size to convert them"
        + (f" ({sizes_from})" if sizes_from else "")
    )


def to_common_frame(
    source: str,
    boxes: BoxTable,
    normalized: BoolArray | None,
    widths: FloatArray,
    heights: FloatArray,
    asset_ids: list[str],
) -> tuple[BoxTable, bool]:
    """Boxes in one frame, and whether that frame is normalised.

    Normalised boxes with a known image size become pixels; a dataset whose boxes are all
    normalised and some sizes unknown stays normalised (the pairing converts it later);
    a mix of pixel boxes and normalised boxes of unknown size is an error. `normalized` None:
    no box is.
    """
    if normalized is None or not normalized.any():
        return boxes, False
    sized = np.isfinite(widths) & np.isfinite(heights)
    if sized[boxes.image[normalized]].all():
        converted = scale_to_pixels(boxes[normalized], widths, heights)
        xyxy, angle = boxes.xyxy.copy(), boxes.angle.copy()
        xyxy[normalized], angle[normalized] = converted.xyxy, converted.angle
        return boxes.with_columns(xyxy=xyxy, angle=angle), False
    if normalized.all():
        return boxes, True
    unsized = boxes.image[normalized & ~sized[boxes.image]][0]
    raise missing_size_error(source, asset_ids[unsized])


def outside_image(
    xyxy: FloatArray, widths: FloatArray, heights: FloatArray, normalized: BoolArray | None
) -> BoolArray:
    """Rows whose box does not overlap its image at all (a 1 by 1 image where normalised);
    `widths`/`heights` are each row's image size, NaN where unknown; `normalized` None: no
    row is.

    Only these are defects: a box that sticks out of its image is kept as it is, because it
    can be clipped only where the size is known, and the same boxes must score the same in
    every format. Where the size is unknown nothing is outside.
    """
    if normalized is not None:
        widths, heights = np.where(normalized, 1.0, widths), np.where(normalized, 1.0, heights)
    x_min, y_min, x_max, y_max = xyxy.T
    with np.errstate(invalid="ignore"):
        outside: BoolArray = (x_min >= widths) | (y_min >= heights) | (x_max <= 0) | (y_max <= 0)
    return outside
