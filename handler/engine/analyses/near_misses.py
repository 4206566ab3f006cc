"""Near misses: false positives overlapping a missed GT box of their class just below IOU_MIN."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from handler.boxes import FloatArray, IntArray
from handler.engine.evaluation import Evaluation, near_pairs, pair_floor
from handler.engine.plugin import Analysis, ShardContext


@dataclass(frozen=True)
class NearMissCounts:
    """False positives overlapping a missed GT box of their class with floor ≤ IoU < IOU_MIN.

    Each false positive counts once, in the band of its best such IoU; `edges` are the
    band bounds (0.1, 0.2, ..., IOU_MIN), `counts[i]` the false positives in [edges[i], edges[i+1]).
    Shards add band by band (every shard has the same edges).
    """

    edges: FloatArray
    counts: IntArray
    missed_gt: int

    def __add__(self, other: NearMissCounts) -> NearMissCounts:
        return NearMissCounts(self.edges, self.counts + other.counts, self.missed_gt + other.missed_gt)

    @property
    def count(self) -> int:
        return int(self.counts.sum())


def band_edges(floor: float, iou_min: float) -> FloatArray:
    """floor, floor + 0.1, ... below `iou_min`, then `iou_min`; one edge (no band) when iou_min ≤ floor."""
    steps = int(np.ceil(round((iou_min - floor) * 10, 9)))
    return np.append(np.round(floor + 0.1 * np.arange(max(steps, 0)), 9), max(iou_min, floor))


def count_near_misses(evaluation: Evaluation, floor: float, iou_min: float) -> NearMissCounts:
    edges = band_edges(floor, iou_min)
    pairs, pred = evaluation.pairs, evaluation.all_pred
    near = near_pairs(evaluation, edges[0], iou_min)
    best = np.full(len(pred), -np.inf)
    np.maximum.at(best, pairs.pred[near], pairs.iou[near])
    band = np.searchsorted(edges, best[np.isfinite(best)], side="right") - 1
    counts = np.bincount(band, minlength=len(edges) - 1).astype(np.int64)
    return NearMissCounts(edges, counts, len(np.unique(pairs.gt[near])))


def _shard(evaluation: Evaluation, context: ShardContext) -> NearMissCounts:
    iou_min = context.thresholds.iou_min
    return count_near_misses(evaluation, pair_floor(iou_min), iou_min)


NEAR_MISSES: Final = Analysis[NearMissCounts]("near_misses", _shard, NearMissCounts.__add__)
