"""Outcome counts per shared image, in asset order: what the bootstrap, slices and most-work read."""

from __future__ import annotations

from typing import Final

import msgspec
import numpy as np

from handler.boxes import AssetTags, IntArray
from handler.engine.breakdowns import counts_by_image
from handler.engine.evaluation import Evaluation
from handler.engine.outcomes import N_OUTCOMES
from handler.engine.plugin import Analysis, ShardContext


class ImageBlock(msgspec.Struct, frozen=True):
    """Outcome counts of one shard's shared images, in asset order."""

    shard: int
    asset_ids: tuple[str, ...]
    counts: IntArray  # (n_images, N_OUTCOMES)
    tags: tuple[AssetTags, ...] = ()  # per image (native asset tags); () when the format has none


class ImageTallies(msgspec.Struct, frozen=True):
    """Every shard's image block, by shard (= asset order)."""

    blocks: tuple[ImageBlock, ...]

    def __add__(self, other: ImageTallies) -> ImageTallies:
        return ImageTallies(tuple(sorted((*self.blocks, *other.blocks), key=lambda block: block.shard)))

    @property
    def asset_ids(self) -> list[str]:
        return [asset_id for block in self.blocks for asset_id in block.asset_ids]

    @property
    def asset_tags(self) -> list[AssetTags]:
        """Every shared image's tags, in asset order (no tags where a shard's format has none)."""
        return [tags for block in self.blocks for tags in (block.tags or ((),) * len(block.asset_ids))]

    @property
    def counts(self) -> IntArray:
        """(n_images, N_OUTCOMES) outcome counts of every shared image, in asset order."""
        if not self.blocks:
            return np.zeros((0, N_OUTCOMES), dtype=np.int64)
        return np.concatenate([block.counts for block in self.blocks])


def _shard(evaluation: Evaluation, context: ShardContext) -> ImageTallies:
    counts = counts_by_image(evaluation, len(context.asset_ids))
    return ImageTallies((ImageBlock(context.shard, context.asset_ids, counts, context.asset_tags),))


def _value(tallies: ImageTallies) -> object:
    """Blocks differ by split; the images, their tags and counts do not."""
    return (tallies.asset_ids, tallies.asset_tags, tallies.counts.tolist())


PER_IMAGE: Final = Analysis[ImageTallies]("per_image", _shard, ImageTallies.__add__, _value)
