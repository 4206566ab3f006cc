"""The second, cheap pass: the boxes of the few images the page draws, after the shards are merged.

Only the shards holding a chosen image are looked at, and only the chosen images of those are
evaluated again: matching never crosses images, so each sketch is exactly what the full run saw.
A shard the driver cut is still in memory; a shard file a worker read is read again here.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from handler.boxes import BoxTable, IntArray
from handler.datasets import PairedBoxes
from handler.engine import Thresholds, evaluate
from handler.engine.sketch import ImageSketch, image_sketch
from handler.execution.run import ShardPlan
from handler.execution.shards import FileShard, PairedShard, read_file_shard


def _paired(task: PairedShard | FileShard) -> tuple[PairedBoxes, Thresholds]:
    """A shard's boxes (read again for a shard file) and its thresholds."""
    if isinstance(task, PairedShard):
        return task.paired, task.context.thresholds
    return read_file_shard(task)[0], task.thresholds


def _on(boxes: BoxTable, rows: IntArray) -> BoxTable:
    """The boxes of images `rows` (sorted), their images renumbered 0..len(rows)-1."""
    chosen = boxes[np.isin(boxes.image, rows)]
    return chosen.with_columns(image=np.searchsorted(rows, chosen.image))


def shard_sketches(paired: PairedBoxes, thresholds: Thresholds, wanted: Collection[str]) -> list[ImageSketch]:
    rows = np.flatnonzero(np.isin(np.asarray(paired.asset_ids, dtype=object), list(wanted)))
    if not len(rows):
        return []
    evaluation = evaluate(_on(paired.gt, rows), _on(paired.pred, rows), len(rows), thresholds)
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
