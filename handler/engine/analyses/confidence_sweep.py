"""The confidence sweep, and its outcome counts by class at every threshold (what routing reads).

Both come from one re-matching per threshold (`sweep.class_sweep`), so they are one partial.
"""

from __future__ import annotations

from typing import Final

import msgspec

from handler.engine.evaluation import Evaluation
from handler.engine.plugin import Analysis, ClassCounts, ShardContext
from handler.engine.sweep import Sweep, class_sweep


class SweepTally(msgspec.Struct, frozen=True):
    """The sweep, and by class its (n_thresholds, N_OUTCOMES) counts at every sweep threshold."""

    sweep: Sweep
    by_class: ClassCounts

    def __add__(self, other: SweepTally) -> SweepTally:
        return SweepTally(self.sweep + other.sweep, self.by_class + other.by_class)


def _shard(evaluation: Evaluation, context: ShardContext) -> SweepTally:
    sweep, by_class = class_sweep(evaluation, context.thresholds, len(context.class_names))
    return SweepTally(sweep, ClassCounts(context.class_names, context.class_ranks, by_class))


CONFIDENCE_SWEEP: Final = Analysis[SweepTally]("confidence_sweep", _shard, SweepTally.__add__)
