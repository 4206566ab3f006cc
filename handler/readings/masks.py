"""The instance masks: runs counted row by row, polygon points normalised or in percent.

A mask is written wrongly in ways its box is not: RLE runs counted along the rows (row-major, a
bitmap's own order) where COCO counts them down the columns, so that COCO reads the transpose of
the mask meant on an image of the swapped size; polygon points normalised to 0-1 or in percent of
the image (Label Studio's) written where pixels are meant. Each is undone on the masks alone
(the runs transposed, the points scaled by each image's size) and fitted, like the boxes' frames,
from where the masks' extents land (`extents`), never from the masks' own shapes.
"""

from __future__ import annotations

from typing import Final

import numpy as np
from msgspec.structs import replace

from handler.boxes import FloatArray, IntArray, MaskRuns, Masks, Parsed, ParsedRows, TableMasks, UnmadeMasks
from handler.datasets.segmentation import readable
from handler.engine.masks import extent, transposed
from handler.readings.reading import Reading, Transform, side_key

OPTION: Final = "MASK"
FAMILY: Final = "mask"
ROW_MAJOR: Final = "row-major"
NORMALIZED: Final = "normalized"
PERCENT: Final = "percent"
# Polygon points whose far corners (EXTENT_QUANTILE of the rows) stay below this are normalised or
# percent ones (rounding may overshoot a little).
FULL_SCALE: Final = {NORMALIZED: 1.0, PERCENT: 100.0}
OVERSHOOT: Final = 1.05
EXTENT_QUANTILE: Final = 0.95
SAYS: Final = {
    ROW_MAJOR: "mask runs counted row by row (row-major) where COCO counts them column by column",
    NORMALIZED: "polygon points normalised to 0-1 (times each image's size)",
    PERCENT: "polygon points in percent of the image (times each image's size / 100)",
}


def _runs_row_major(runs: MaskRuns) -> MaskRuns:
    """The runs read row by row: a width x height mask read column by column, transposed."""
    return transposed(MaskRuns(runs.counts, runs.offsets, runs.width, runs.height))


def readable_masks(masks: TableMasks | None) -> Masks | None:
    """The rows' masks parsed, where still the text the file wrote."""
    return None if masks is None else readable(masks)


def _row_major(parsed: Parsed) -> tuple[ParsedRows, list[str]]:
    rows = parsed.rows
    masks = readable_masks(rows.masks)
    if isinstance(masks, UnmadeMasks):
        masks = replace(masks, runs=_runs_row_major(masks.runs))
    elif masks is not None:
        masks = _runs_row_major(masks)
    return replace(rows, masks=masks), parsed.class_names


def _point_rows(masks: UnmadeMasks) -> IntArray:
    """Each polygon point's row."""
    part_row = np.repeat(np.arange(len(masks), dtype=np.int64), np.diff(masks.row_offsets))
    return np.repeat(part_row, np.diff(masks.part_offsets))


def _scaled_points(full_scale: float) -> Transform:
    def transform(parsed: Parsed) -> tuple[ParsedRows, list[str]]:
        rows = parsed.rows
        masks = readable_masks(rows.masks)
        if not isinstance(masks, UnmadeMasks):
            return replace(rows, masks=masks), parsed.class_names
        row = _point_rows(masks)
        size = np.stack((masks.width[row], masks.height[row]), axis=1) / full_scale
        return replace(rows, masks=replace(masks, points=masks.points * size)), parsed.class_names

    return transform


def reading(value: str, side: str = "pred") -> Reading:
    """`{SIDE}_MASK`'s reading: `row-major`, `normalized` or `percent` (ValueError names them)."""
    kind = value.strip().lower().replace("normalised", NORMALIZED)
    if kind not in SAYS:
        raise ValueError(f"{value!r} is not a mask reading: expected one of {' | '.join(SAYS)}")
    transform = _row_major if kind == ROW_MAJOR else _scaled_points(FULL_SCALE[kind])
    return Reading(FAMILY, side_key(side, OPTION), kind, SAYS[kind], transform, side=side)


def _runs_extent(runs: MaskRuns) -> FloatArray:
    """(N, 4) each row's mask extent in pixels, NaN for a row without runs."""
    box = extent(runs)
    return np.where(runs.present[:, None], box, np.nan)


def extents(written: TableMasks | None, n: int) -> FloatArray:
    """(n, 4) the extent of each row's mask (`[x_min, y_min, x_max, y_max]`, pixels; a polygon's by
    its points), NaN where a row has none: where the masks land, what a mask reading is placed by."""
    masks = readable_masks(written)
    if masks is None:
        return np.full((n, 4), np.nan)
    if isinstance(masks, MaskRuns):
        return _runs_extent(masks)
    box = _runs_extent(masks.runs)
    row = _point_rows(masks)
    if not len(row):
        return box
    low = np.full((len(masks), 2), np.inf)
    high = np.full((len(masks), 2), -np.inf)
    np.minimum.at(low, row, masks.points)
    np.maximum.at(high, row, masks.points)
    drawn = masks.drawn
    box[drawn] = np.concatenate((low, high), axis=1)[drawn]
    return box


def extents_under(found: Reading, parsed: Parsed) -> FloatArray:
    """`extents` of the rows' masks read with `found` (a mask reading): runs read row by row are
    measured where they land without being transposed (the extent of the width x height mask
    read column by column, its axes swapped)."""
    rows = parsed.rows
    if found.value != ROW_MAJOR:
        return extents(found.transform(parsed)[0].masks, len(rows))
    masks = readable_masks(rows.masks)
    runs = masks.runs if isinstance(masks, UnmadeMasks) else masks
    if runs is None:
        return extents(None, len(rows))
    swapped = _runs_extent(MaskRuns(runs.counts, runs.offsets, runs.width, runs.height))[:, [1, 0, 3, 2]]
    if isinstance(masks, UnmadeMasks):
        return np.where(masks.drawn[:, None], extents(masks, len(rows)), swapped)
    return swapped


def candidates(rows: ParsedRows, side: str) -> list[Reading]:
    """The mask readings the rows' masks could be written in: row-major where some row has runs,
    normalised or percent where the polygon points' far corners stay within that scale."""
    masks = readable_masks(rows.masks)
    if masks is None:
        return []
    runs = masks.runs if isinstance(masks, UnmadeMasks) else masks
    found = [reading(ROW_MAJOR, side)] if runs.present.any() else []
    if not isinstance(masks, UnmadeMasks) or not len(masks.points):
        return found
    far = float(np.quantile(np.abs(masks.points).max(axis=1), EXTENT_QUANTILE))
    return found + [reading(kind, side) for kind, scale in FULL_SCALE.items() if far <= OVERSHOOT * scale]
