"""Suspected ground-truth errors: boxes where a confident prediction contradicts the GT.

The rule, per kept prediction with confidence >= SUSPECT_CONFIDENCE:
- `missing_gt`: a false positive that no GT box of any class overlaps with IoU >=
  MISSING_MAX_IOU: the object may be missing from the GT;
- `wrong_class`: a class-confused match with IoU >= IOU_PERFECT: the box is right, so
  the GT class may be wrong.
Counts add over shards; the listed boxes are each shard's top ones by confidence, merged
by (confidence descending, shard, position in the shard): the order one process lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import msgspec
import numpy as np

from handler.boxes import IntArray
from handler.engine.evaluation import NEAR_MISS_FLOOR, Evaluation
from handler.engine.outcomes import Outcome

SUSPECT_CONFIDENCE: Final = 0.9
# Candidate pairs are kept down to this IoU, so "no pair" means no overlap of this much.
MISSING_MAX_IOU: Final = NEAR_MISS_FLOOR
KINDS: Final = ("missing_gt", "wrong_class")
MISSING_GT, WRONG_CLASS = 0, 1
NOT_SUSPECTED: Final = -1
# The most confident suspects listed in the findings (all are flagged in the ledger).
TOP_SUSPECTS: Final = 20


def suspect_kinds(evaluation: Evaluation, iou_perfect: float) -> IntArray:
    """Per kept prediction: the index of its kind in KINDS, or NOT_SUSPECTED."""
    pred, outcomes, pairs = evaluation.pred, evaluation.outcomes, evaluation.pairs
    overlapped = np.zeros(len(evaluation.all_pred), dtype=bool)
    overlapped[pairs.pred[pairs.iou >= MISSING_MAX_IOU]] = True
    confident = pred.confidence >= SUSPECT_CONFIDENCE
    missing = confident & (outcomes.pred_outcome == Outcome.FALSE_POSITIVE) & ~overlapped[evaluation.kept]
    wrong = confident & (outcomes.pred_outcome == Outcome.CLASS_CONFUSED)
    wrong &= outcomes.match.pred_iou >= iou_perfect
    kinds = np.full(len(pred), NOT_SUSPECTED, dtype=np.int64)
    kinds[missing], kinds[wrong] = MISSING_GT, WRONG_CLASS
    return kinds


class SuspectedBox(msgspec.Struct, frozen=True):
    """One listed suspect; ties go by `shard`, `image` (in the shard) and `position` (in the shard's
    kept predictions): asset order, then input order, however the images were split."""

    confidence: float
    shard: int
    image: int
    position: int
    asset_id: str
    box: tuple[float, float, float, float]
    angle: float  # the box's turn (BoxTable.angle)
    kind: str
    iou: float | None  # the match's IoU; None for `missing_gt` (no GT overlaps it)
    pred_class: str
    gt_class: str | None

    @property
    def rank(self) -> tuple[float, int, int, int]:
        return (-self.confidence, self.shard, self.image, self.position)


class SuspectTally(msgspec.Struct, frozen=True):
    """Suspects per kind (KINDS order) and the `limit` most confident ones."""

    counts: IntArray
    listed: tuple[SuspectedBox, ...]
    limit: int

    def __add__(self, other: SuspectTally) -> SuspectTally:
        listed = sorted((*self.listed, *other.listed), key=lambda box: box.rank)[: self.limit]
        return SuspectTally(self.counts + other.counts, tuple(listed), self.limit)

    @property
    def count(self) -> int:
        return int(self.counts.sum())

    def none(self) -> SuspectTally:
        """No suspect at all: another reading of the predictions explains their misses."""
        return SuspectTally(np.zeros_like(self.counts), (), self.limit)


def shard_suspects(
    evaluation: Evaluation,
    kinds: IntArray,
    shard: int,
    names: tuple[Sequence[str], Sequence[str]],
    limit: int,
) -> SuspectTally:
    """A shard's suspects; `names` are its asset ids and class names."""
    asset_ids, class_names = names
    pred, match = evaluation.pred, evaluation.outcomes.match
    suspects = np.flatnonzero(kinds != NOT_SUSPECTED)
    top = suspects[np.lexsort((suspects, pred.image[suspects], -pred.confidence[suspects]))][:limit]
    wrong = kinds[top] == WRONG_CLASS
    gt_class = np.full(len(top), -1, dtype=np.int64)
    gt_class[wrong] = evaluation.gt.class_id[match.pred_match[top[wrong]]]
    listed = tuple(
        SuspectedBox(
            confidence=confidence,
            shard=shard,
            image=image,
            position=position,
            asset_id=asset_ids[image],
            box=(x0, y0, x1, y1),
            angle=angle,
            kind=KINDS[kind],
            iou=iou if is_wrong else None,
            pred_class=class_names[pred_class],
            gt_class=class_names[gt] if is_wrong else None,
        )
        for position, confidence, image, (x0, y0, x1, y1), angle, kind, iou, is_wrong, pred_class, gt in zip(
            top.tolist(),
            pred.confidence[top].tolist(),
            pred.image[top].tolist(),
            pred.xyxy[top].tolist(),
            pred.angle[top].tolist(),
            kinds[top].tolist(),
            match.pred_iou[top].tolist(),
            wrong.tolist(),
            pred.class_id[top].tolist(),
            gt_class.tolist(),
            strict=True,
        )
    )
    counts = np.bincount(kinds[suspects], minlength=len(KINDS)).astype(np.int64)
    return SuspectTally(counts, listed, limit)
