"""The mergeable state of an evaluation (contract §11): shards of whole assets map to it, merged exactly.

A state is the core tally, one partial per registered analysis (the engine's own and the features'),
and the listed skipped boxes. Every analysis declares its merge, and none is special here: what
reading the datasets found is a partial of some analysis, merged by it. Every merge is associative
and order-independent, so one process, a process pool and a dask cluster give the same findings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

import msgspec
from msgspec import field

from handler.boxes import SkippedBox
from handler.engine.outcomes import Tally
from handler.engine.plugin import GT_SIDE, PRED_SIDE, Analysis

Partial = TypeVar("Partial")


class ListedSkip(msgspec.Struct, frozen=True):
    """A listed skip with its place: the first `limit` of all shards are those one process lists."""

    side: int
    shard: int
    position: int
    skip: SkippedBox


class Skips(msgspec.Struct, frozen=True):
    """The first `limit` skipped boxes of each side, listed with their places; merges keep the first."""

    listed: tuple[ListedSkip, ...] = ()
    limit: int = 0

    def __add__(self, other: Skips) -> Skips:
        limit = max(self.limit, other.limit)
        return Skips(_first_skips((*self.listed, *other.listed), limit), limit)


class ReadFigures(msgspec.Struct, frozen=True):
    """What reading the datasets found: partials by analysis name, merged into that analysis's own
    (reading counts what no shard sees: images on one side only, boxes skipped, layouts), and the
    listed skips. The driver adds its own after the merge; a worker that reads its shard files, its."""

    found: Mapping[str, object] = field(default_factory=dict)
    skips: Skips = field(default_factory=Skips)


def _first_skips(skips: tuple[ListedSkip, ...], limit: int) -> tuple[ListedSkip, ...]:
    """The first `limit` listed skips of each side, in shard order."""
    ordered = sorted(skips, key=lambda s: (s.side, s.shard, s.position))
    return tuple(s for side in (GT_SIDE, PRED_SIDE) for s in [x for x in ordered if x.side == side][:limit])


class EvaluationState(msgspec.Struct, frozen=True):
    """Everything the report needs of some shards; `a + b` is the state of both."""

    tally: Tally
    partials: Mapping[Analysis[Any], object]
    skips: Skips = field(default_factory=Skips)

    def __add__(self, other: EvaluationState) -> EvaluationState:
        if self.partials.keys() != other.partials.keys():
            raise ValueError("Expected states of the same analyses")
        partials = {
            analysis: analysis.merge(part, other.partials[analysis])
            for analysis, part in self.partials.items()
        }
        return EvaluationState(self.tally + other.tally, partials, self.skips + other.skips)

    def of(self, analysis: Analysis[Partial]) -> Partial:
        """The merged partial of one analysis (typed as the analysis declares it)."""
        return cast(Partial, self.partials[analysis])

    def adding(self, read: ReadFigures) -> EvaluationState:
        """This state with what reading the datasets found, each part merged by its analysis."""
        by_name = {analysis.name: analysis for analysis in self.partials}
        unknown = set(read.found) - set(by_name)
        if unknown:
            raise ValueError(f"reading found partials of no analysis of this state: {sorted(unknown)}")
        partials = dict(self.partials)
        for name, part in read.found.items():
            analysis = by_name[name]
            partials[analysis] = analysis.merge(partials[analysis], part)
        return EvaluationState(self.tally, partials, self.skips + read.skips)
