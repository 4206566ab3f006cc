"""What an analysis plugs into: the shard it sees, and the mergeable partial it declares.

An analysis reduces one shard's `Evaluation` to a partial figure whose merge is exact,
associative and order-independent, so any split of the images into shards, merged in any
order, gives the partial of one shot. `EvaluationState` holds one partial per registered
analysis (handler/engine/analyses/__init__.py) and merges them with the analysis's own merge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final, Generic, TypeVar

import msgspec
import numpy as np
from msgspec.structs import fields

from handler.boxes import AssetTags, BoolArray, FloatArray, IntArray
from handler.engine.evaluation import Evaluation, Thresholds

# A class name's place in the one class order: GT names first, then prediction-only names,
# each by the first shard (and position in it) that has them: the order one process sees.
ClassRank = tuple[int, int, int]
GT_SIDE: Final = 0
PRED_SIDE: Final = 1

Partial = TypeVar("Partial")


class ShardContext(msgspec.Struct, frozen=True):
    """What a shard's analyses know beyond its evaluation: its place, names and image sizes."""

    shard: int  # position in asset order among the run's shards
    asset_ids: tuple[str, ...]
    asset_tags: tuple[AssetTags, ...]  # per asset, or () when the datasets carry no asset tags
    class_names: tuple[str, ...]
    class_ranks: tuple[ClassRank, ...]
    area_scale: FloatArray | None  # per image: box area → pixels²; None when unknown
    size_mismatch: BoolArray  # per image: width or height differ between the datasets
    thresholds: Thresholds


def plain(value: object) -> object:
    """A partial as plain data (lists, dicts, numbers), for comparing two partials by value."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, msgspec.Struct):
        return {item.name: plain(getattr(value, item.name)) for item in fields(value)}
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [plain(item) for item in value]
    return value


class Analysis(msgspec.Struct, Generic[Partial], frozen=True):
    """One analysis: its name, its per-shard function and the exact merge of its partials.

    `value` is what two partials must agree on to be equal whatever the split (the default:
    all of it); a partial that records where in the split something was (a shard's index)
    leaves that out. Functions are module-level, so the analysis pickles to any worker.
    """

    name: str
    shard: Callable[[Evaluation, ShardContext], Partial]
    merge: Callable[[Partial, Partial], Partial]
    value: Callable[[Partial], object] = plain


class ClassCounts(msgspec.Struct, frozen=True):
    """Counts keyed by class name (first axis), in the one class order; merges name by name."""

    names: tuple[str, ...]
    ranks: tuple[ClassRank, ...]
    counts: IntArray  # (n_classes, ...)

    def __add__(self, other: ClassCounts) -> ClassCounts:
        names, ranks, rows = class_union((self.names, self.ranks), (other.names, other.ranks))
        counts = np.zeros((len(names), *self.counts.shape[1:]), dtype=np.int64)
        counts[rows[0]] += self.counts
        counts[rows[1]] += other.counts
        return ClassCounts(names, ranks, counts)


ClassOrder = tuple[tuple[str, ...], tuple[ClassRank, ...]]


def class_union(
    first: ClassOrder, second: ClassOrder
) -> tuple[tuple[str, ...], tuple[ClassRank, ...], tuple[IntArray, IntArray]]:
    """The names of both in the one class order, and where each side's rows go in it."""
    rank = dict(zip(*second, strict=True))
    for name, r in zip(*first, strict=True):
        rank[name] = min(r, rank.get(name, r))
    names = tuple(sorted(rank, key=lambda name: rank[name]))
    index = {name: i for i, name in enumerate(names)}
    rows = tuple(np.array([index[name] for name in side[0]], dtype=np.int64) for side in (first, second))
    return names, tuple(rank[name] for name in names), (rows[0], rows[1])
