"""What the page draws of single images: listed near-miss pairs, and the boxes of chosen images.

Near-miss pairs are a mergeable top-K: each shard lists its `limit` closest misses (highest IoU
below IOU_MIN), ranked by (IoU descending, shard, image, position), so the merged list is the one
a single process makes, under any split. A sketch is every box of one image with its outcome: it is
made from that image's own evaluation (matching never crosses images), so a second pass over the
few chosen images gives exactly what the full run saw there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from handler.boxes import FloatArray, IntArray
from handler.engine.evaluation import Evaluation, near_pairs
from handler.engine.outcomes import Outcome

# The closest near misses listed (and drawn) in the findings.
TOP_NEAR_MISSES: Final = 8
# Boxes drawn per image at most: a crowded image still costs the page little.
MAX_SKETCH_BOXES: Final = 80
Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class NearMissPair:
    """A false positive and the missed GT box of its class it overlaps best (IoU just below IOU_MIN)."""

    iou: float
    shard: int
    image: int
    position: int  # in the shard's predictions (all of them, as candidate pairs index them)
    asset_id: str
    class_name: str
    gt_box: Box
    pred_box: Box

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
        )
        for iou, image, position, class_id, g, p in zip(
            pairs.iou[near][top].tolist(),
            pred.image[pred_index[top]].tolist(),
            pred_index[top].tolist(),
            pred.class_id[pred_index[top]].tolist(),
            gt.xyxy[gt_index[top]].tolist(),
            pred.xyxy[pred_index[top]].tolist(),
            strict=True,
        )
    )


@dataclass(frozen=True)
class SketchBox:
    side: str  # "gt" or "pred"
    box: Box
    class_name: str
    outcome: str  # Outcome.key


@dataclass(frozen=True)
class ImageSketch:
    """Every box of one image (up to MAX_SKETCH_BOXES) on its frame, in the boxes' own units.

    `aspect` is the image's height / width as shown: a normalised frame is 1 by 1 in box units.
    `sized`: the dataset gave the image's size (else the frame is a guess: a square, the boxes' extent).
    """

    asset_id: str
    width: float
    height: float
    aspect: float
    boxes: tuple[SketchBox, ...]
    left_out: int  # boxes beyond MAX_SKETCH_BOXES, not drawn
    normalized: bool = False
    sized: bool = True


def _known(width: float, height: float) -> bool:
    return bool(np.isfinite(width) and np.isfinite(height) and width > 0 and height > 0)


def _frame(boxes: FloatArray, width: float, height: float, normalized: bool) -> tuple[float, float, float]:
    """(width, height, aspect) of the frame: the image's size, or the boxes' extent when it is unknown."""
    known = _known(width, height)
    if normalized:
        return 1.0, 1.0, height / width if known else 1.0
    if not known:
        extent = boxes[:, 2:].max(axis=0) if len(boxes) else np.ones(2)
        width, height = float(max(extent[0], 1.0)), float(max(extent[1], 1.0))
    return width, height, height / width


def image_sketch(
    evaluation: Evaluation,
    image: int,
    asset_id: str,
    class_names: Sequence[str],
    size: tuple[float, float, bool],
) -> ImageSketch:
    """The sketch of `image` of an evaluation: `size` is its (width, height, normalized)."""
    gt, pred, outcomes = evaluation.gt, evaluation.pred, evaluation.outcomes
    on_gt, on_pred = np.flatnonzero(gt.image == image), np.flatnonzero(pred.image == image)
    xyxy = np.concatenate((gt.xyxy[on_gt], pred.xyxy[on_pred]))
    width, height, aspect = _frame(xyxy, *size)
    sides = np.repeat(["gt", "pred"], [len(on_gt), len(on_pred)])
    classes: IntArray = np.concatenate((gt.class_id[on_gt], pred.class_id[on_pred]))
    codes: IntArray = np.concatenate((outcomes.gt_outcome[on_gt], outcomes.pred_outcome[on_pred]))
    keys = [outcome.key for outcome in Outcome]
    drawn = min(len(sides), MAX_SKETCH_BOXES)
    columns = (
        sides[:drawn].tolist(),
        xyxy[:drawn].tolist(),
        classes[:drawn].tolist(),
        codes[:drawn].tolist(),
    )
    boxes = tuple(
        SketchBox(side, (b[0], b[1], b[2], b[3]), class_names[c], keys[o])
        for side, b, c, o in zip(*columns, strict=True)
    )
    return ImageSketch(
        asset_id, width, height, aspect, boxes, len(sides) - drawn, size[2], _known(size[0], size[1])
    )
