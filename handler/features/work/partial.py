"""Outcome counts by box size (COCO's small / medium / large), when the box areas are known."""

from __future__ import annotations

from typing import Final

import msgspec
import numpy as np

from handler.boxes import BoxTable, FloatArray, IntArray
from handler.engine.breakdowns import counts_by_key
from handler.engine.evaluation import Evaluation
from handler.engine.plugin import Analysis, ShardContext

# COCO's area ranges, in pixels²: small < 32², medium < 96², large from 96².
SIZE_NAMES: Final = ("small", "medium", "large")
SIZE_BOUNDS: Final = (32.0**2, 96.0**2)


def size_bucket(boxes: BoxTable, area_scale: FloatArray) -> IntArray:
    """0 small, 1 medium, 2 large, by pixel area; `area_scale[image]` turns a box's area into pixels²."""
    pixels = boxes.area * area_scale[boxes.image]
    return np.searchsorted(np.asarray(SIZE_BOUNDS), pixels, side="right").astype(np.int64)


def counts_by_size(evaluation: Evaluation, area_scale: FloatArray) -> IntArray:
    """(3, N_OUTCOMES) counts by GT box size; a false positive goes by its own box's size (as COCOeval does).

    `area_scale` is 1 per image for pixel boxes, width · height for normalised ones.
    """
    gt_size = size_bucket(evaluation.gt, area_scale)
    pred_size = size_bucket(evaluation.pred, area_scale)
    return counts_by_key(evaluation, gt_size, pred_size, len(SIZE_NAMES))


class SizeCounts(msgspec.Struct, frozen=True):
    """(3, N_OUTCOMES) counts by size; None once any shard could not size its boxes."""

    counts: IntArray | None

    def __add__(self, other: SizeCounts) -> SizeCounts:
        if self.counts is None or other.counts is None:
            return SizeCounts(None)
        return SizeCounts(self.counts + other.counts)


def _shard(evaluation: Evaluation, context: ShardContext) -> SizeCounts:
    scale = context.area_scale
    return SizeCounts(None if scale is None else counts_by_size(evaluation, scale))


BY_SIZE: Final = Analysis[SizeCounts]("by_size", _shard, SizeCounts.__add__)
