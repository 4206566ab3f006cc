"""How a reader hands masks to `build_dataset`: a `MaskRuns` column aligned with its `ParsedRows`,
kept, skipped and left out (crowds) with the boxes it goes with."""

from __future__ import annotations

import numpy as np

from handler.boxes import Images, ParsedRows
from handler.datasets.builder import build_dataset
from handler.engine.masks import extent, from_bitmaps


def test_masks_follow_their_rows_through_the_rules() -> None:
    drawn = np.zeros((4, 6, 8), dtype=bool)
    for i in range(4):
        drawn[i, i : i + 2, 2 * i : 2 * i + 3] = True
    masks = from_bitmaps(drawn)
    xyxy = extent(masks)
    xyxy[1, 0] = np.nan  # a defective box: skipped with its mask
    rows = ParsedRows(
        xyxy=xyxy,
        class_id=np.zeros(4, dtype=np.int64),
        image=np.zeros(4, dtype=np.int64),
        source_index=None,
        position=lambda row: f"annotation {row}",
        crowd=np.array([False, False, True, False]),  # a crowd region: left out with its mask
        masks=masks,
    )
    images = Images(["a.jpg"], np.array([8.0]), np.array([6.0]))
    dataset = build_dataset("gt.json", "coco", rows, images, ["cat"])
    kept = dataset.boxes
    assert len(kept) == 2 and kept.has_masks
    assert np.array_equal(extent(kept.mask_runs), extent(masks[[0, 3]]))
    assert dataset.skipped_count == 1 and dataset.crowd_excluded == 1
