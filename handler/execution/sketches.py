"""The second, cheap pass: the boxes of the few images the page draws, after the shards are merged.

Only the shards holding a chosen image are looked at, and only the chosen images of those are
evaluated again: matching never crosses images, so each sketch is exactly what the full run saw.
A shard the driver cut is still in memory; a shard file a worker read is read again here.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from handler.boxes import BoxTable, IntArray
from handler.datasets import PairedBoxes
from handler.engine import Thresholds, evaluate
from handler.engine.drawn_boxes import ImageSketch, image_sketch
from handler.engine.matching import enumerate_ranges
from handler.execution.run import ShardPlan
from handler.execution.shards import FileShard, PairedShard, read_file_shard


def _paired(task: PairedShard | FileShard) -> tuple[PairedBoxes, Thresholds]:
    """A shard's boxes (read again for a shard file) and its thresholds."""
    if isinstance(task, PairedShard):
        return task.paired, task.context.thresholds
    return read_file_shard(task)[0], task.thresholds


def _on(boxes: BoxTable, rows: IntArray, n_images: int) -> BoxTable:
    """The boxes of images `rows` (sorted), their images renumbered 0..len(rows)-1.

    A shard the driver cut holds its boxes in image order: each image's boxes are found by
    bisection, at a cost in proportion to the few images drawn. Else one pass over the images.
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


def shard_sketches(paired: PairedBoxes, thresholds: Thresholds, wanted: Collection[str]) -> list[ImageSketch]:
    rows = _rows_of(paired.asset_ids, wanted)
    if not len(rows):
        return []
    n_images = len(paired.asset_ids)
    evaluation = evaluate(
        _on(paired.gt, rows, n_images), _on(paired.pred, rows, n_images), len(rows), thresholds
    )
    return [
        image_sketch(
            evaluation,
            image,
            paired.asset_ids[row],
            paired.class_names,
            (float(paired.widths[row]), float(paired.heights[row]), paired.normalized),
        )
        for image, row in enumerate(rows.tolist())
    ]


def sketch_images(plan: ShardPlan, shards: Collection[int], wanted: Collection[str]) -> list[ImageSketch]:
    """The sketches of the `wanted` asset ids, found in the plan's `shards` (those holding them)."""
    return [
        sketch
        for index, task in enumerate(plan.tasks)
        if index in shards
        for sketch in shard_sketches(*_paired(task), wanted)
    ]
