"""Near misses: false positives overlapping a missed GT box of their class just below IOU_MIN.

One analysis, two figures: how many there are, by IoU band (`NearMissCounts`, which add band by
band), and the closest few with their boxes (`NearMissPair`s, a mergeable top-K: each shard lists
its TOP_NEAR_MISSES closest, ranked by (IoU descending, shard, image, position), so the merged list
is the one a single process makes, under any split). The `near_misses` section shows both, and the
page sketches the listed pairs' images.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import msgspec
import numpy as np

from handler.boxes import FloatArray, IntArray
from handler.engine.evaluation import Evaluation, near_pairs, pair_floor
from handler.engine.plugin import Analysis, ShardContext, plain

# The closest near misses listed (and drawn) in the findings.
TOP_NEAR_MISSES: Final = 8
Box = tuple[float, float, float, float]


class NearMissCounts(msgspec.Struct, frozen=True):
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


class NearMissPair(msgspec.Struct, frozen=True):
    """A false positive and the missed GT box of its class it overlaps best (IoU just below IOU_MIN)."""

    iou: float
    shard: int
    image: int
    position: int  # in the shard's predictions (all of them, as candidate pairs index them)
    asset_id: str
    class_name: str
    gt_box: Box
    pred_box: Box
    gt_angle: float  # the boxes' turns (BoxTable.angle)
    pred_angle: float

    @property
    def rank(self) -> tuple[float, int, int, int]:
        return (-self.iou, self.shard, self.image, self.position)


def first_ranked(pairs: Sequence[NearMissPair], limit: int) -> tuple[NearMissPair, ...]:
    return tuple(sorted(pairs, key=lambda pair: pair.rank)[:limit])


def near_miss_pairs(
    evaluation: Evaluation,
    low: float,
    iou_min: float,
    shard: int,
    names: tuple[Sequence[str], Sequence[str]],
    limit: int = TOP_NEAR_MISSES,
) -> tuple[NearMissPair, ...]:
    """The shard's `limit` closest near misses, each false positive once at its best pair."""
    asset_ids, class_names = names
    pairs, gt, pred = evaluation.pairs, evaluation.gt, evaluation.all_pred
    near = np.flatnonzero(near_pairs(evaluation, low, iou_min))
    # Best pair per prediction: sort by prediction, then IoU descending (then GT index), take the first.
    near = near[np.lexsort((pairs.gt[near], -pairs.iou[near], pairs.pred[near]))]
    near = near[np.unique(pairs.pred[near], return_index=True)[1]]
    pred_index, gt_index = pairs.pred[near], pairs.gt[near]
    top = np.lexsort((pred_index, pred.image[pred_index], -pairs.iou[near]))[:limit]
    return tuple(
        NearMissPair(
            iou=iou,
            shard=shard,
            image=image,
            position=position,
            asset_id=asset_ids[image],
            class_name=class_names[class_id],
            gt_box=(g[0], g[1], g[2], g[3]),
            pred_box=(p[0], p[1], p[2], p[3]),
            gt_angle=gt_angle,
            pred_angle=pred_angle,
        )
        for iou, image, position, class_id, g, p, gt_angle, pred_angle in zip(
            pairs.iou[near][top].tolist(),
            pred.image[pred_index[top]].tolist(),
            pred_index[top].tolist(),
            pred.class_id[pred_index[top]].tolist(),
            gt.xyxy[gt_index[top]].tolist(),
            pred.xyxy[pred_index[top]].tolist(),
            gt.angle[gt_index[top]].tolist(),
            pred.angle[pred_index[top]].tolist(),
            strict=True,
        )
    )


class NearMissFigures(msgspec.Struct, frozen=True):
    """The merged partial: the counts by band and the closest pairs."""

    counts: NearMissCounts
    pairs: tuple[NearMissPair, ...]

    def __add__(self, other: NearMissFigures) -> NearMissFigures:
        return NearMissFigures(
            self.counts + other.counts, first_ranked((*self.pairs, *other.pairs), TOP_NEAR_MISSES)
        )


def _shard(evaluation: Evaluation, context: ShardContext) -> NearMissFigures:
    iou_min = context.thresholds.iou_min
    counts = count_near_misses(evaluation, pair_floor(iou_min), iou_min)
    names = (context.asset_ids, context.class_names)
    return NearMissFigures(
        counts, near_miss_pairs(evaluation, float(counts.edges[0]), iou_min, context.shard, names)
    )


def _value(found: NearMissFigures) -> object:
    """Where a pair sat in its shard differs by split; the counts and the pairs themselves do not."""
    pairs = [(p.iou, p.asset_id, p.class_name, p.gt_box, p.pred_box) for p in found.pairs]
    return {"counts": plain(found.counts), "pairs": pairs}


NEAR_MISSES: Final = Analysis[NearMissFigures]("near_misses", _shard, NearMissFigures.__add__, _value)
