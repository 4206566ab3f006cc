"""Images too crowded to match: more overlapping pairs than one image may hold in memory.

Matching and its analyses hold every candidate pair of an image; on a degenerate image (thousands
of boxes drawn on top of or inside each other) those are the product of its box counts: 10,000
identical boxes on each side are 100 million pairs. Such an image's boxes are skipped, counted and
listed, instead of exhausting the memory; an image of many boxes that do not overlap costs little
and is matched as any other.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from handler.boxes import BoxTable, IntArray
from handler.engine.evaluation import NEAR_MISS_FLOOR
from handler.engine.health import DUPLICATE_IOU
from handler.engine.matching import more_pairs_than

# Candidate pairs one image may have: ground truth with predictions at IoU ≥ NEAR_MISS_FLOOR, and
# ground truth with itself at DUPLICATE_IOU (a thousand identical boxes on each side reach it).
CROWDED_PAIRS: Final = 1_000_000
CROWDED_PROBLEM: Final = f"on an image with more than {CROWDED_PAIRS:,} overlapping box pairs"


def crowded_images(gt: BoxTable, pred: BoxTable, n_images: int) -> IntArray:
    """The images (ascending) whose boxes make more than CROWDED_PAIRS pairs, of either kind.

    Only an image whose box counts multiply past the bound can be one, so the pairs are counted
    for those alone, each up to the bound: the usual dataset costs two bincounts.
    """
    gt_count = np.bincount(gt.image, minlength=n_images)
    pred_count = np.bincount(pred.image, minlength=n_images)
    suspects = np.flatnonzero((gt_count * pred_count > CROWDED_PAIRS) | (gt_count * gt_count > CROWDED_PAIRS))
    if not len(suspects):
        return suspects
    gt_rows, pred_rows = _rows_by_image(gt.image, suspects), _rows_by_image(pred.image, suspects)
    crowded = [
        image
        for image, gt_on, pred_on in zip(suspects.tolist(), gt_rows, pred_rows, strict=True)
        if _crowded(gt[gt_on], pred[pred_on])
    ]
    return np.array(crowded, dtype=np.int64)


def _crowded(gt: BoxTable, pred: BoxTable) -> bool:
    gt, pred = (table.with_columns(image=np.zeros(len(table), dtype=np.int64)) for table in (gt, pred))
    return more_pairs_than(gt, pred, NEAR_MISS_FLOOR, CROWDED_PAIRS) or more_pairs_than(
        gt, gt, DUPLICATE_IOU, CROWDED_PAIRS
    )


def _rows_by_image(image: IntArray, images: IntArray) -> list[IntArray]:
    """The rows on each of `images`, in table order."""
    order = np.argsort(image, kind="stable")
    bounds = np.searchsorted(image[order], np.stack((images, images + 1)))
    return [order[start:stop] for start, stop in zip(bounds[0].tolist(), bounds[1].tolist(), strict=True)]


def off_images(table: BoxTable, images: IntArray) -> BoxTable:
    """The table without the boxes of `images`."""
    return table[~np.isin(table.image, images)]
