"""Outcome counts per (image, class) pair that has a box, sparse: what a per-class bootstrap reads.

A GT box counts under its image and GT class, a false positive under its image and predicted
class (as `per_class` and `per_image` count them), so a class's rows add up to its per-class
counts and an image's rows to its per-image counts.
"""

from __future__ import annotations

from typing import Final

import msgspec
import numpy as np

from handler.boxes import IntArray
from handler.engine.breakdowns import count_outcomes
from handler.engine.evaluation import Evaluation
from handler.engine.outcomes import N_OUTCOMES, Outcome
from handler.engine.plugin import Analysis, ShardContext


class ImageClassBlock(msgspec.Struct, frozen=True):
    """One shard's (image, class) rows: image rows into `asset_ids`, class rows into `class_names`."""

    shard: int
    asset_ids: tuple[str, ...]
    class_names: tuple[str, ...]
    image: IntArray  # (k,)
    class_id: IntArray  # (k,)
    counts: IntArray  # (k, N_OUTCOMES)


class ImageClassRows(msgspec.Struct, frozen=True):
    """Every shard's rows on the run's shared images (asset order) and one list of class names."""

    asset_ids: list[str]
    class_names: list[str]
    image: IntArray
    class_id: IntArray
    counts: IntArray


class ImageClassTallies(msgspec.Struct, frozen=True):
    blocks: tuple[ImageClassBlock, ...]

    def __add__(self, other: ImageClassTallies) -> ImageClassTallies:
        return ImageClassTallies(tuple(sorted((*self.blocks, *other.blocks), key=lambda block: block.shard)))

    def rows(self) -> ImageClassRows:
        """The blocks' rows joined: image rows offset by the shards before, class names unified."""
        names: dict[str, int] = {}
        images, classes, offset = [], [], 0
        for block in self.blocks:  # one step per shard, each vectorised
            to_run = np.asarray([names.setdefault(name, len(names)) for name in block.class_names], np.int64)
            images.append(block.image + offset)
            classes.append(to_run[block.class_id] if len(to_run) else block.class_id)
            offset += len(block.asset_ids)
        counts = [block.counts for block in self.blocks]
        return ImageClassRows(
            [asset_id for block in self.blocks for asset_id in block.asset_ids],
            list(names),
            np.concatenate(images) if images else np.zeros(0, np.int64),
            np.concatenate(classes) if classes else np.zeros(0, np.int64),
            np.concatenate(counts) if counts else np.zeros((0, N_OUTCOMES), np.int64),
        )


def _shard(evaluation: Evaluation, context: ShardContext) -> ImageClassTallies:
    n_classes = max(1, len(context.class_names))
    fp = evaluation.outcomes.pred_outcome == Outcome.FALSE_POSITIVE
    gt_keys = evaluation.gt.image * n_classes + evaluation.gt.class_id
    fp_keys = evaluation.pred.image[fp] * n_classes + evaluation.pred.class_id[fp]
    keys, inverse = np.unique(np.concatenate((gt_keys, fp_keys)).astype(np.int64), return_inverse=True)
    inverse = inverse.reshape(-1)
    counts = count_outcomes(
        inverse[: len(gt_keys)], evaluation.outcomes.gt_outcome, inverse[len(gt_keys) :], len(keys)
    )
    block = ImageClassBlock(
        context.shard, context.asset_ids, context.class_names, keys // n_classes, keys % n_classes, counts
    )
    return ImageClassTallies((block,))


def _value(tallies: ImageClassTallies) -> object:
    """Blocks differ by split; the rows do not."""
    rows = tallies.rows()
    names = sorted(rows.class_names)
    rank = np.asarray([names.index(name) for name in rows.class_names] or [0], dtype=np.int64)[rows.class_id]
    order = np.lexsort((rank, rows.image))
    return (
        rows.asset_ids,
        names,
        rows.image[order].tolist(),
        rank[order].tolist(),
        rows.counts[order].tolist(),
    )


IMAGE_CLASSES: Final = Analysis[ImageClassTallies]("image_classes", _shard, ImageClassTallies.__add__, _value)
