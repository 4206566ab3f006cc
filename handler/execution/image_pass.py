"""The extra exact pass after the merge: the chosen images' boxes, paired and evaluated again.

One pass serves every finisher that needs one (handler/report/finishers/): it runs over the union
of the images they chose. Only the shards holding a chosen image are looked at, and only the
chosen images of those are evaluated again: matching never crosses images, so each image's
evaluation is exactly what the full run saw there, under any split into shards. A shard the driver
cut is still in memory; a shard file a worker read is read again here.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence

import msgspec
import numpy as np
from msgspec.structs import replace

from handler.boxes import BoxTable, IntArray
from handler.datasets import PairedBoxes
from handler.engine import Thresholds, evaluate
from handler.engine.analyses.per_image import PER_IMAGE
from handler.engine.evaluation import Evaluation
from handler.engine.matching import enumerate_ranges
from handler.engine.state import EvaluationState
from handler.execution.run import ShardPlan
from handler.execution.shards import shard_boxes


class PassedShard(msgspec.Struct, frozen=True):
    """The chosen images of one shard: their paired boxes (images renumbered 0.. in the shard's
    order, with their ids, sizes and tags) and their evaluation at the run's thresholds."""

    shard: int
    paired: PairedBoxes
    evaluation: Evaluation


class ImagePass(msgspec.Struct, frozen=True):
    """What the pass saw, shard by shard in asset order (empty when no finisher chose an image)."""

    shards: tuple[PassedShard, ...] = ()

    def images(self, wanted: Collection[str]) -> Iterator[tuple[PassedShard, int]]:
        """(shard, image) of each `wanted` asset id the pass saw, in the run's asset order."""
        for passed in self.shards:
            for image, asset_id in enumerate(passed.paired.asset_ids):
                if asset_id in wanted:
                    yield passed, image


def _on(boxes: BoxTable, rows: IntArray, n_images: int) -> BoxTable:
    """The boxes of images `rows` (sorted), their images renumbered 0..len(rows)-1.

    A shard the driver cut holds its boxes in image order: each image's boxes are found by
    bisection, at a cost in proportion to the few images chosen. Else one pass over the images.
    """
    image = boxes.image
    if bool((image[1:] >= image[:-1]).all()):
        starts = np.searchsorted(image, rows, "left")
        chosen = boxes[enumerate_ranges(starts, np.searchsorted(image, rows, "right") - starts)[1]]
    else:
        drawn = np.zeros(n_images, dtype=bool)
        drawn[rows] = True
        chosen = boxes[drawn[image]]
    return chosen.with_columns(image=np.searchsorted(rows, chosen.image))


def _rows_of(asset_ids: Sequence[str], wanted: Collection[str]) -> IntArray:
    """Where the `wanted` asset ids are, ascending: a bisection into the few wanted ones per asset."""
    if not wanted or not asset_ids:
        return np.empty(0, dtype=np.int64)
    ids, chosen = np.asarray(asset_ids, dtype=str), np.sort(np.asarray(list(wanted), dtype=str))
    nearest = chosen[np.minimum(np.searchsorted(chosen, ids), len(chosen) - 1)]
    return np.flatnonzero(nearest == ids)


def _images(paired: PairedBoxes, rows: IntArray) -> PairedBoxes:
    """The paired boxes of images `rows` only (what reading found stays with the whole run)."""
    n_images, picked = len(paired.asset_ids), rows.tolist()
    return replace(
        paired,
        asset_ids=[paired.asset_ids[row] for row in picked],
        gt=_on(paired.gt, rows, n_images),
        pred=_on(paired.pred, rows, n_images),
        widths=paired.widths[rows],
        heights=paired.heights[rows],
        tags=None if paired.tags is None else [paired.tags[row] for row in picked],
        gt_only_images=0,
        pred_only_images=0,
        size_mismatch=paired.size_mismatch[rows],
    )


def shards_holding(state: EvaluationState, wanted: frozenset[str]) -> list[int]:
    """The shards whose images include one of `wanted`, in order (the merged per-image blocks know)."""
    return sorted(
        {block.shard for block in state.of(PER_IMAGE).blocks if not wanted.isdisjoint(block.asset_ids)}
    )


def passed_shard(
    shard: int, paired: PairedBoxes, thresholds: Thresholds, wanted: frozenset[str]
) -> PassedShard:
    """The `wanted` images of one shard's paired boxes, evaluated again on their own."""
    rows = _rows_of(paired.asset_ids, wanted)
    chosen = _images(paired, rows)
    return PassedShard(shard, chosen, evaluate(chosen.gt, chosen.pred, len(rows), thresholds))


def image_pass(plan: ShardPlan, state: EvaluationState, wanted: frozenset[str]) -> ImagePass:
    """The `wanted` images, paired and evaluated again, read from the shards that hold them."""
    if not wanted:
        return ImagePass()
    return ImagePass(
        tuple(
            passed_shard(index, *shard_boxes(plan.tasks[index]), wanted)
            for index in shards_holding(state, wanted)
        )
    )
