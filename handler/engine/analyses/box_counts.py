"""Images and boxes of the shared assets (the findings' `dataset` figures a shard can count)."""

from __future__ import annotations

from typing import Final

import msgspec

from handler.engine.additive import add_fields
from handler.engine.evaluation import Evaluation
from handler.engine.plugin import Analysis, ShardContext


class DatasetCounts(msgspec.Struct, frozen=True):
    """Box and image counts of both datasets; every field adds up over shards.

    Shards count the first four (`BOX_COUNTS`); the rest are what reading the datasets found
    (`state.ReadFigures`), added by whoever read them.
    """

    images: int = 0
    gt_objects: int = 0
    predictions: int = 0
    predictions_kept: int = 0
    gt_only_images: int = 0
    pred_only_images: int = 0
    crowd_excluded: int = 0
    gt_skipped: int = 0
    pred_skipped: int = 0

    def __add__(self, other: DatasetCounts) -> DatasetCounts:
        return add_fields(self, other)


def _shard(evaluation: Evaluation, context: ShardContext) -> DatasetCounts:
    return DatasetCounts(
        images=len(context.asset_ids),
        gt_objects=len(evaluation.gt),
        predictions=len(evaluation.all_pred),
        predictions_kept=len(evaluation.pred),
    )


BOX_COUNTS: Final = Analysis[DatasetCounts]("box_counts", _shard, DatasetCounts.__add__)
