"""What a shard adds to the data-health figures: size mismatches, duplicate GT, boxes by class name."""

from __future__ import annotations

from typing import Final

from handler.engine.evaluation import Evaluation
from handler.engine.health import HealthFigures, by_class, duplicate_pairs
from handler.engine.plugin import Analysis, ShardContext


def _shard(evaluation: Evaluation, context: ShardContext) -> HealthFigures:
    names = list(context.class_names)
    return HealthFigures(
        size_mismatched=int(context.size_mismatch.sum()),
        duplicate_gt=duplicate_pairs(evaluation.gt, len(context.asset_ids)),
        class_gt=by_class(evaluation.gt.class_id, names),
        class_kept=by_class(evaluation.pred.class_id, names),
    )


DATA_HEALTH: Final = Analysis[HealthFigures]("data_health", _shard, HealthFigures.__add__)
