"""`slices`: per-slice score, grade and interval; named sets of images.

A slice is a set of scored images: the asset ids a `--slices` file lists under a name, or the
images whose native asset `tags` carry a tag. Its figures are the merged per-image outcome
counts of those images, so they are exact for any split into shards.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal, cast

import numpy as np
from pydantic import Field

from handler.engine.analyses.per_image import PER_IMAGE
from handler.engine.bootstrap import bootstrap
from handler.engine.counts import OutcomeCounts
from handler.engine.state import EvaluationState
from handler.engine.timecost import TimeCosts
from handler.sections.context import RunFacts
from handler.sections.fields import Count, Counts, Grade, Score, Section, outcome_counts
from handler.sections.shown import Shown

# Tag slices beyond this many (the most images first) are left out: the page stays readable.
MAX_TAG_SLICES: Final = 50

SliceSource = Literal["file", "tag"]


class SliceRow(Section):
    name: str
    source: SliceSource = Field(description="A --slices file's name, or a native asset tag.")
    images: Count = Field(description="Scored images in the slice.")
    unscored_assets: Count = Field(description="Listed assets that are not among the scored images.")
    counts: Counts
    assistance_score: Score
    grade: Grade
    score_low: Score | None = Field(description="The 95% bootstrap interval; null when nothing was scored.")
    score_high: Score | None


def _tag_slices(state: EvaluationState) -> list[tuple[str, list[int]]]:
    rows: dict[str, list[int]] = {}
    for row, tags in enumerate(state.of(PER_IMAGE).asset_tags):
        for tag in tags:
            rows.setdefault(tag, []).append(row)
    ranked = sorted(rows.items(), key=lambda item: (-len(item[1]), item[0]))[:MAX_TAG_SLICES]
    return sorted(ranked)


def _row(
    name: str, source: SliceSource, rows: list[int], listed: int, state: EvaluationState, costs: TimeCosts
) -> SliceRow:
    counts = state.of(PER_IMAGE).counts[np.asarray(rows, dtype=np.int64)]
    whole = OutcomeCounts(counts.sum(axis=0))
    spread = bootstrap(counts, costs) if whole.total else None
    return SliceRow(
        name=name,
        source=source,
        images=len(rows),
        unscored_assets=listed - len(rows),
        counts=outcome_counts(whole.rows),
        assistance_score=whole.score,
        grade=cast(Grade, whole.grade),
        score_low=None if spread is None else spread.score[0],
        score_high=None if spread is None else spread.score[1],
    )


def slices(facts: RunFacts) -> tuple[SliceRow, ...]:
    """The file's slices in its order, then a slice per asset tag, by name."""
    state, costs = facts.state, facts.costs
    index = {asset_id: row for row, asset_id in enumerate(state.of(PER_IMAGE).asset_ids)}
    found = []
    for name, ids in facts.slices.items():
        unique = list(dict.fromkeys(ids))
        rows = sorted(index[i] for i in unique if i in index)
        found.append(_row(name, "file", rows, len(unique), state, costs))
    found += [_row(tag, "tag", rows, len(rows), state, costs) for tag, rows in _tag_slices(state)]
    return tuple(found)


SlicesSection = Annotated[
    tuple[SliceRow, ...],
    Field(
        description="Per slice of the images (--slices file, then native asset tags, at most 50): "
        "score, grade and interval from the slice's own images."
    ),
    Shown(slices, "slices"),
]
