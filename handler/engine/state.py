"""The mergeable state of an evaluation (contract §11): shards of whole assets map to it, merged exactly.

A state is the core tally, what reading the datasets found, and one partial per registered
analysis (handler/engine/analyses/). Every merge is associative and order-independent, so
one process, a process pool and a dask cluster give the same findings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, cast

from handler.boxes import SkippedBox
from handler.engine.analyses.box_counts import BOX_COUNTS, DatasetCounts
from handler.engine.analyses.data_health import DATA_HEALTH
from handler.engine.health import HealthFigures
from handler.engine.outcomes import Tally
from handler.engine.plugin import GT_SIDE, PRED_SIDE, Analysis

Partial = TypeVar("Partial")


@dataclass(frozen=True)
class ListedSkip:
    """A listed skip with its place: the first `limit` of all shards are those one process lists."""

    side: int
    shard: int
    position: int
    skip: SkippedBox


@dataclass(frozen=True)
class ReadFigures:
    """What reading the datasets found: counts that add, and the first listed skips of each side.

    The driver adds its own after the merge; a worker that reads its shard files adds theirs.
    """

    figures: DatasetCounts = field(default_factory=DatasetCounts)
    health: HealthFigures = field(default_factory=HealthFigures)
    skipped: tuple[ListedSkip, ...] = ()
    skip_limit: int = 0

    def __add__(self, other: ReadFigures) -> ReadFigures:
        limit = max(self.skip_limit, other.skip_limit)
        return ReadFigures(
            self.figures + other.figures,
            self.health + other.health,
            _first_skips((*self.skipped, *other.skipped), limit),
            limit,
        )


def _first_skips(skips: tuple[ListedSkip, ...], limit: int) -> tuple[ListedSkip, ...]:
    """The first `limit` listed skips of each side, in shard order."""
    ordered = sorted(skips, key=lambda s: (s.side, s.shard, s.position))
    return tuple(s for side in (GT_SIDE, PRED_SIDE) for s in [x for x in ordered if x.side == side][:limit])


@dataclass(frozen=True)
class EvaluationState:
    """Everything the report needs of some shards; `a + b` is the state of both."""

    tally: Tally
    partials: Mapping[Analysis[Any], object]
    read: ReadFigures = field(default_factory=ReadFigures)

    def __add__(self, other: EvaluationState) -> EvaluationState:
        if self.partials.keys() != other.partials.keys():
            raise ValueError("Expected states of the same analyses")
        partials = {
            analysis: analysis.merge(part, other.partials[analysis])
            for analysis, part in self.partials.items()
        }
        return EvaluationState(self.tally + other.tally, partials, self.read + other.read)

    def of(self, analysis: Analysis[Partial]) -> Partial:
        """The merged partial of one analysis (typed as the analysis declares it)."""
        return cast(Partial, self.partials[analysis])

    def adding(self, read: ReadFigures) -> EvaluationState:
        """This state with what the driver found reading the datasets."""
        return replace(self, read=self.read + read)

    @property
    def figures(self) -> DatasetCounts:
        """The dataset figures: what shards counted plus what reading found."""
        return self.of(BOX_COUNTS) + self.read.figures

    @property
    def health(self) -> HealthFigures:
        """The data-health figures: what shards counted plus what reading found."""
        return self.of(DATA_HEALTH) + self.read.health
