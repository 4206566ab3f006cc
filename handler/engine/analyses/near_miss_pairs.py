"""The closest near misses with their boxes (`drawn_boxes.near_miss_pairs`): a top-K that merges exactly."""

from __future__ import annotations

from typing import Final

from handler.engine.analyses.near_misses import band_edges
from handler.engine.drawn_boxes import TOP_NEAR_MISSES, NearMissPair, first_ranked, near_miss_pairs
from handler.engine.evaluation import Evaluation, pair_floor
from handler.engine.plugin import Analysis, ShardContext

NearMissPairs = tuple[NearMissPair, ...]


def _shard(evaluation: Evaluation, context: ShardContext) -> NearMissPairs:
    iou_min = context.thresholds.iou_min
    low = float(band_edges(pair_floor(iou_min), iou_min)[0])
    names = (context.asset_ids, context.class_names)
    return near_miss_pairs(evaluation, low, iou_min, context.shard, names)


def _merge(first: NearMissPairs, second: NearMissPairs) -> NearMissPairs:
    return first_ranked((*first, *second), TOP_NEAR_MISSES)


def _value(pairs: NearMissPairs) -> object:
    """Where a pair sat in its shard differs by split; the pairs themselves do not."""
    return [(p.iou, p.asset_id, p.class_name, p.gt_box, p.pred_box) for p in pairs]


NEAR_MISS_PAIRS: Final = Analysis[NearMissPairs]("near_miss_pairs", _shard, _merge, _value)
