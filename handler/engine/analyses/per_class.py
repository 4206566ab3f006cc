"""Outcome counts by class name: FP by predicted class, everything else by GT class."""

from __future__ import annotations

from typing import Final

from handler.engine.breakdowns import counts_by_class
from handler.engine.evaluation import Evaluation
from handler.engine.plugin import Analysis, ClassCounts, ShardContext


def _shard(evaluation: Evaluation, context: ShardContext) -> ClassCounts:
    counts = counts_by_class(evaluation, len(context.class_names))
    return ClassCounts(context.class_names, context.class_ranks, counts)


PER_CLASS: Final = Analysis[ClassCounts]("per_class", _shard, ClassCounts.__add__)
