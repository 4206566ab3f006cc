"""The mergeable state of an evaluation (SPEC §11): shards of whole assets map to it, states merge exactly.

A state holds everything the report is built from, as integers that add (outcome counts
per image, per class, per box size, per sweep threshold and near-miss band), an exact IoU
sum, and lists keyed by the shard's position in asset order. Merging is associative and
order-independent, so one process, a process pool and a dask cluster give the same findings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

import numpy as np

from handler.boxes import AssetTags, FloatArray, IntArray, SkippedBox
from handler.engine import analysis
from handler.engine.additive import add_fields
from handler.engine.evaluation import Evaluation, Thresholds, pair_floor
from handler.engine.gt_errors import SuspectTally
from handler.engine.health import HealthFigures
from handler.engine.outcomes import Outcome, Tally
from handler.engine.sketch import TOP_NEAR_MISSES, NearMissPair, first_ranked, near_miss_pairs
from handler.engine.sweep import Sweep

N_OUTCOMES: Final = len(Outcome)
# A class name's place in the one class order: GT names first, then prediction-only names,
# each by the first shard (and position in it) that has them: the order one process sees.
ClassRank = tuple[int, int, int]
GT_SIDE, PRED_SIDE = 0, 1


@dataclass(frozen=True)
class ImageBlock:
    """Outcome counts of one shard's shared images, in asset order."""

    shard: int
    asset_ids: tuple[str, ...]
    counts: IntArray  # (n_images, 5)
    tags: tuple[AssetTags, ...] = ()  # per image (native asset tags); () when the format has none


@dataclass(frozen=True)
class ClassTable:
    """Outcome counts and confusions by class name (FP by predicted class, the rest by GT class)."""

    names: tuple[str, ...]
    ranks: tuple[ClassRank, ...]
    counts: IntArray  # (n_classes, 5)
    confusions: IntArray  # (m, 3): GT class, predicted class, count of class-confused matches
    sweep_counts: IntArray  # (n_classes, n_thresholds, 5): `counts` at every sweep threshold (routing)

    def __add__(self, other: ClassTable) -> ClassTable:
        rank = {name: r for name, r in zip(other.names, other.ranks, strict=True)}
        for name, r in zip(self.names, self.ranks, strict=True):
            rank[name] = min(r, rank.get(name, r))
        names = tuple(sorted(rank, key=lambda name: rank[name]))
        index = {name: i for i, name in enumerate(names)}
        counts = np.zeros((len(names), N_OUTCOMES), dtype=np.int64)
        sweep_counts = np.zeros((len(names), *self.sweep_counts.shape[1:]), dtype=np.int64)
        confusions = []
        for table in (self, other):
            rows = np.array([index[name] for name in table.names], dtype=np.int64)
            counts[rows] += table.counts
            sweep_counts[rows] += table.sweep_counts
            confusions.append(np.column_stack((rows[table.confusions[:, :2]], table.confusions[:, 2])))
        merged = np.concatenate(confusions).reshape(-1, 3)
        pairs = analysis.count_pairs(merged[:, :2], merged[:, 2])
        return ClassTable(names, tuple(rank[name] for name in names), counts, pairs, sweep_counts)


@dataclass(frozen=True)
class NearMissTally:
    """False positives near a missed GT box of their class, per IoU band (`analysis.near_misses`)."""

    edges: FloatArray
    counts: IntArray
    missed_gt: int
    listed: tuple[NearMissPair, ...] = ()  # the closest ones (`sketch.near_miss_pairs`)

    def __add__(self, other: NearMissTally) -> NearMissTally:
        listed = first_ranked((*self.listed, *other.listed), TOP_NEAR_MISSES)
        return NearMissTally(self.edges, self.counts + other.counts, self.missed_gt + other.missed_gt, listed)

    @property
    def count(self) -> int:
        return int(self.counts.sum())


@dataclass(frozen=True)
class DatasetFigures:
    """Box and image counts of both datasets; every field adds up over shards."""

    images: int = 0
    gt_objects: int = 0
    predictions: int = 0
    predictions_kept: int = 0
    gt_only_images: int = 0
    pred_only_images: int = 0
    crowd_excluded: int = 0
    gt_skipped: int = 0
    pred_skipped: int = 0

    def __add__(self, other: DatasetFigures) -> DatasetFigures:
        return add_fields(self, other)


@dataclass(frozen=True)
class ListedSkip:
    """A listed skip with its place: the first `limit` of all shards are those one process lists."""

    side: int
    shard: int
    position: int
    skip: SkippedBox


@dataclass(frozen=True)
class EvaluationState:
    """Everything the report needs of some shards; `a + b` is the state of both."""

    tally: Tally
    sweep: Sweep
    images: tuple[ImageBlock, ...]
    classes: ClassTable
    sizes: IntArray | None  # (3, 5) by box size; None when the box areas are unknown
    near_misses: NearMissTally
    figures: DatasetFigures
    skipped: tuple[ListedSkip, ...]
    skip_limit: int
    gt_errors: SuspectTally
    health: HealthFigures = field(default_factory=HealthFigures)  # data-health warnings (issue 11)

    def __add__(self, other: EvaluationState) -> EvaluationState:
        sizes = None if self.sizes is None or other.sizes is None else self.sizes + other.sizes
        return EvaluationState(
            tally=self.tally + other.tally,
            sweep=self.sweep + other.sweep,
            images=tuple(sorted((*self.images, *other.images), key=lambda block: block.shard)),
            classes=self.classes + other.classes,
            sizes=sizes,
            near_misses=self.near_misses + other.near_misses,
            figures=self.figures + other.figures,
            skipped=_first_skips((*self.skipped, *other.skipped), self.skip_limit),
            skip_limit=self.skip_limit,
            gt_errors=self.gt_errors + other.gt_errors,
            health=self.health + other.health,
        )

    @property
    def asset_ids(self) -> list[str]:
        return [asset_id for block in self.images for asset_id in block.asset_ids]

    @property
    def asset_tags(self) -> list[AssetTags]:
        """Every shared image's tags, in asset order (no tags where a shard's format has none)."""
        return [tags for block in self.images for tags in (block.tags or ((),) * len(block.asset_ids))]

    @property
    def image_counts(self) -> IntArray:
        """(n_images, 5) outcome counts of every shared image, in asset order."""
        if not self.images:
            return np.zeros((0, N_OUTCOMES), dtype=np.int64)
        return np.concatenate([block.counts for block in self.images])

    def skips(self, side: int) -> list[SkippedBox]:
        return [listed.skip for listed in self.skipped if listed.side == side]


def _first_skips(skips: tuple[ListedSkip, ...], limit: int) -> tuple[ListedSkip, ...]:
    """The first `limit` listed skips of each side, in shard order."""
    ordered = sorted(skips, key=lambda s: (s.side, s.shard, s.position))
    return tuple(s for side in (GT_SIDE, PRED_SIDE) for s in [x for x in ordered if x.side == side][:limit])


@dataclass(frozen=True)
class ShardFacts:
    """What a shard's state needs beyond the evaluation: names, sizes and the datasets' figures."""

    shard: int
    asset_ids: tuple[str, ...]
    asset_tags: tuple[AssetTags, ...]  # per asset, or () when the datasets carry no asset tags
    class_names: tuple[str, ...]
    class_ranks: tuple[ClassRank, ...]
    area_scale: FloatArray | None  # per image: box area → pixels²; None when unknown
    figures: DatasetFigures
    skipped: tuple[tuple[SkippedBox, ...], tuple[SkippedBox, ...]]  # listed GT skips, prediction skips
    skip_limit: int
    health: HealthFigures = field(default_factory=HealthFigures)


@dataclass(frozen=True)
class ShardSweep:
    """A shard's confidence sweep, its per-class counts and its suspected GT errors."""

    sweep: Sweep
    class_counts: IntArray  # (n_classes, n_thresholds, 5)
    suspects: SuspectTally


def shard_state(
    evaluation: Evaluation, swept: ShardSweep, facts: ShardFacts, thresholds: Thresholds
) -> EvaluationState:
    """The state of one shard: its evaluation and sweep reduced to what merges."""
    n_classes = len(facts.class_names)
    classes = ClassTable(
        facts.class_names,
        facts.class_ranks,
        analysis.per_class(evaluation, n_classes),
        analysis.confusion_pairs(evaluation),
        swept.class_counts,
    )
    floor = pair_floor(thresholds.iou_min)
    near = analysis.near_misses(evaluation, floor, thresholds.iou_min)
    names = (facts.asset_ids, facts.class_names)
    closest = near_miss_pairs(evaluation, float(near.edges[0]), thresholds.iou_min, facts.shard, names)
    sizes = None if facts.area_scale is None else analysis.by_size(evaluation, facts.area_scale)
    skipped = tuple(
        ListedSkip(side, facts.shard, position, skip)
        for side, listed in enumerate(facts.skipped)
        for position, skip in enumerate(listed)
    )
    return EvaluationState(
        tally=evaluation.tally,
        sweep=swept.sweep,
        images=(
            ImageBlock(
                facts.shard,
                facts.asset_ids,
                analysis.per_image(evaluation, len(facts.asset_ids)),
                facts.asset_tags,
            ),
        ),
        classes=classes,
        sizes=sizes,
        near_misses=NearMissTally(near.edges, near.counts, near.missed_gt, closest),
        figures=facts.figures,
        skipped=skipped,
        skip_limit=facts.skip_limit,
        gt_errors=swept.suspects,
        health=facts.health,
    )
