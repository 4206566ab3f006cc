"""Suspected ground-truth errors (`engine.gt_errors`): counts by kind and the most confident ones."""

from __future__ import annotations

from typing import Final

from handler.engine.evaluation import Evaluation
from handler.engine.gt_errors import TOP_SUSPECTS, SuspectTally, shard_suspects, suspect_kinds
from handler.engine.plugin import Analysis, ShardContext


def _shard(evaluation: Evaluation, context: ShardContext) -> SuspectTally:
    kinds = suspect_kinds(evaluation, context.thresholds.iou_perfect)
    names = (context.asset_ids, context.class_names)
    return shard_suspects(evaluation, kinds, context.shard, names, TOP_SUSPECTS)


def _value(tally: SuspectTally) -> object:
    """Where a listed suspect sat in its shard differs by split; the boxes themselves do not."""
    listed = [
        (b.confidence, b.asset_id, b.box, b.kind, b.iou, b.pred_class, b.gt_class) for b in tally.listed
    ]
    return (tally.counts.tolist(), listed, tally.limit)


GT_ERRORS: Final = Analysis[SuspectTally]("gt_errors", _shard, SuspectTally.__add__, _value)
