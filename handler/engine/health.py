"""Data-health figures: what the warnings are decided from, as counts that add over shards.

Each shard counts; `a + b` adds the counts (and the counters key by key), so the warnings,
decided from the merged figures only, are the same for every executor.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import msgspec
import numpy as np
from msgspec import field

from handler.boxes import BoxTable, IntArray, LayoutNote
from handler.engine.additive import add_fields
from handler.engine.matching import candidate_pairs

# Same-class GT boxes on one image this close are one object drawn twice.
DUPLICATE_IOU: Final = 0.95


class HealthFigures(msgspec.Struct, frozen=True):
    """Counts behind the data-health warnings; dataset-level ones travel with one shard per dataset."""

    gt_boxes: int = 0  # boxes read (after skips and crowd regions), on every asset of the dataset
    pred_boxes: int = 0
    gt_confident: int = 0  # of those, the boxes that wrote a confidence
    pred_confident: int = 0
    gt_turned: int = 0  # of those, the rotated boxes
    pred_turned: int = 0
    size_mismatched: int = 0  # shared assets whose width or height differ between the datasets
    duplicate_gt: int = 0  # same-class GT pairs on one image with IoU >= DUPLICATE_IOU
    gt_skip_reasons: Mapping[str, int] = field(default_factory=dict)  # skipped GT boxes, by reason
    pred_skip_reasons: Mapping[str, int] = field(default_factory=dict)  # skipped predictions, by reason
    class_gt: Mapping[str, int] = field(default_factory=dict)  # GT boxes on shared assets, by class name
    class_kept: Mapping[str, int] = field(default_factory=dict)  # kept predictions, by class name
    gt_layout: tuple[LayoutNote, ...] = ()  # text lines that do not fit the layout read (one dataset: 0 or 1)
    pred_layout: tuple[LayoutNote, ...] = ()

    def __add__(self, other: HealthFigures) -> HealthFigures:
        return add_fields(self, other)


def duplicate_pairs(gt: BoxTable, n_images: int) -> int:
    """Same-class pairs of GT boxes on one image with IoU >= DUPLICATE_IOU, each pair once."""
    pairs = candidate_pairs(gt, gt, n_images, DUPLICATE_IOU)
    distinct = pairs.gt < pairs.pred
    same_class = gt.class_id[pairs.gt] == gt.class_id[pairs.pred]
    return int(np.count_nonzero(distinct & same_class))


def by_class(class_id: IntArray, names: list[str]) -> dict[str, int]:
    """Boxes per class name, for the classes that have any."""
    counts = np.bincount(class_id, minlength=len(names))
    return {names[i]: int(counts[i]) for i in np.flatnonzero(counts).tolist()}
