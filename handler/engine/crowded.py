"""Images too crowded to match, and the run's budget of work: what would exhaust time or memory.

Matching and its analyses hold every candidate pair of an image; on a degenerate image (thousands
of boxes drawn on top of or inside each other) those are the product of its box counts: 10,000
identical boxes on each side are 100 million pairs. Two bounds keep a run's time and memory
bounded whatever its images hold:

- an image: at most CROWDED_PAIRS pairs (a pair with a rotated box counts ROTATED_PAIR_COST:
  clipping two polygons costs that many upright IoUs);
- the run: the images of more than HEAVY_PAIRS pairs (no ordinary image has as many) share
  RUN_PAIRS, taken in image order; the heavy images past it are skipped, whatever they hold.

A skipped image's boxes are counted and listed with the bound they broke. The pairs are counted
before any is matched, by the rotated boxes' envelopes (no polygon is clipped to decide), and
only on images whose box counts multiply past HEAVY_PAIRS: the usual dataset costs two bincounts.
"""

from __future__ import annotations

from typing import Final

import msgspec
import numpy as np

from handler.boxes import BoxTable, IntArray
from handler.engine.evaluation import NEAR_MISS_FLOOR
from handler.engine.health import DUPLICATE_IOU
from handler.engine.matching import count_pairs

# Candidate pairs one image may have: ground truth with predictions at IoU ≥ NEAR_MISS_FLOOR, and
# ground truth with itself at DUPLICATE_IOU (a thousand identical boxes on each side reach it).
CROWDED_PAIRS: Final = 1_000_000
# What one pair with a rotated box costs, in upright pairs (the polygon clipping).
ROTATED_PAIR_COST: Final = 32
# An image of more pairs draws on the run's budget, RUN_PAIRS (in upright pairs).
HEAVY_PAIRS: Final = 100_000
RUN_PAIRS: Final = 2_000_000
CROWDED_PROBLEM: Final = f"on an image with more than {CROWDED_PAIRS:,} overlapping box pairs"
ROTATED_PROBLEM: Final = (
    f"on an image with more than {CROWDED_PAIRS // ROTATED_PAIR_COST:,} overlapping pairs of rotated boxes"
)
RUN_PROBLEM: Final = (
    f"on an image of more than {HEAVY_PAIRS:,} overlapping box pairs, past the run's budget of "
    f"{RUN_PAIRS:,} for such images"
)
PROBLEMS: Final = (CROWDED_PROBLEM, ROTATED_PROBLEM, RUN_PROBLEM)


class SkippedImages(msgspec.Struct, frozen=True):
    """The images (ascending) whose boxes are skipped, and why each (one of the PROBLEMs)."""

    images: IntArray
    reasons: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.images)


def crowded_images(gt: BoxTable, pred: BoxTable, n_images: int) -> SkippedImages:
    """The images past a bound: their own, or the run's (in image order)."""
    gt_count = np.bincount(gt.image, minlength=n_images)
    pred_count = np.bincount(pred.image, minlength=n_images)
    suspects = np.flatnonzero((gt_count * pred_count > HEAVY_PAIRS) | (gt_count * gt_count > HEAVY_PAIRS))
    gt_rows, pred_rows = _rows_by_image(gt.image, suspects), _rows_by_image(pred.image, suspects)
    skipped: list[tuple[int, str]] = []
    left = RUN_PAIRS
    for image, gt_on, pred_on in zip(suspects.tolist(), gt_rows, pred_rows, strict=True):
        # Counted no further than a bound decides: once the run's budget is spent, past HEAVY_PAIRS.
        problem, cost = _problem(gt[gt_on], pred[pred_on], max(min(left, CROWDED_PAIRS), HEAVY_PAIRS))
        if problem is None and cost > HEAVY_PAIRS:
            problem = RUN_PROBLEM if cost > left else None
            left -= 0 if problem else cost
        if problem is not None:
            skipped.append((image, problem))
    return SkippedImages(
        np.array([image for image, _ in skipped], dtype=np.int64), tuple(problem for _, problem in skipped)
    )


def _problem(gt: BoxTable, pred: BoxTable, limit: int) -> tuple[str | None, int]:
    """An image's own bound broken (None: none), and its pairs' cost counted up to `limit`."""
    gt, pred = (table.with_columns(image=np.zeros(len(table), dtype=np.int64)) for table in (gt, pred))
    cost = 0
    for first, second, floor in ((gt, pred, NEAR_MISS_FLOOR), (gt, gt, DUPLICATE_IOU)):
        found = count_pairs(first, second, floor, min(limit, CROWDED_PAIRS))
        if found.upright + found.rotated > CROWDED_PAIRS:
            return CROWDED_PROBLEM, found.upright + found.rotated
        if found.rotated * ROTATED_PAIR_COST > CROWDED_PAIRS:
            return ROTATED_PROBLEM, found.rotated * ROTATED_PAIR_COST
        cost += found.upright + found.rotated * ROTATED_PAIR_COST
        if cost > limit:  # past what the caller asked to know
            break
    return None, cost


def _rows_by_image(image: IntArray, images: IntArray) -> list[IntArray]:
    """The rows on each of `images`, in table order. Only the rows on them are sorted: the images
    are the few suspects, and sorting the whole column held two of its size at the read's end."""
    on = np.flatnonzero(np.isin(image, images))
    order = on[np.argsort(image[on], kind="stable")]
    bounds = np.searchsorted(image[order], np.stack((images, images + 1)))
    return [order[start:stop] for start, stop in zip(bounds[0].tolist(), bounds[1].tolist(), strict=True)]


def off_images(table: BoxTable, images: IntArray) -> BoxTable:
    """The table without the boxes of `images`."""
    return table[~np.isin(table.image, images)]
