"""Candidate pairs and greedy one-to-one matching (SPEC §5), vectorised over all images.

Images are processed in chunks so that the number of (GT, prediction) pairs held at
once stays bounded; inside a chunk there is no Python loop per image, box or pair.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from handler.boxes import BoolArray, BoxTable, FloatArray, IntArray
from handler.engine.iou import paired_iou

# Pairs of one chunk held in memory at once (~100 bytes each while computing IoU).
PAIR_BUDGET = 4_000_000


@dataclass(frozen=True)
class CandidatePairs:
    """Pairs of a GT box and a prediction on the same image with IoU ≥ a floor.

    `gt` and `pred` index the tables given to `candidate_pairs`; `iou` is the pair's IoU.
    """

    gt: IntArray
    pred: IntArray
    iou: FloatArray

    def __getitem__(self, mask: BoolArray) -> CandidatePairs:
        return CandidatePairs(self.gt[mask], self.pred[mask], self.iou[mask])

    @classmethod
    def concatenate(cls, parts: list[CandidatePairs]) -> CandidatePairs:
        if not parts:
            empty = np.empty(0, dtype=np.int64)
            return cls(empty, empty.copy(), np.empty(0))
        return cls(
            np.concatenate([p.gt for p in parts]),
            np.concatenate([p.pred for p in parts]),
            np.concatenate([p.iou for p in parts]),
        )


@dataclass(frozen=True)
class MatchResult:
    """One-to-one matches: `gt_match[g]` is the matched prediction or -1, and vice versa."""

    gt_match: IntArray
    pred_match: IntArray
    pred_iou: FloatArray  # IoU with the matched GT box; NaN when unmatched


def _image_ranges(image: IntArray, n_images: int) -> tuple[IntArray, IntArray]:
    """Start and count of each image's rows in a table sorted by image."""
    counts = np.bincount(image, minlength=n_images).astype(np.int64)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    return starts, counts


def _chunks(pair_counts: IntArray, budget: int) -> Iterator[tuple[int, int]]:
    """Consecutive image ranges [first, last) whose pair counts sum to about `budget`."""
    cumulative = np.cumsum(pair_counts)
    first = 0
    while first < len(pair_counts):
        already = cumulative[first - 1] if first else 0
        last = int(np.searchsorted(cumulative, already + budget, side="right"))
        last = max(last, first + 1)  # an image larger than the budget is its own chunk
        yield first, last
        first = last


def _pairs_of_chunk(
    gt_start: IntArray, gt_count: IntArray, pred_start: IntArray, pred_count: IntArray
) -> tuple[IntArray, IntArray]:
    """Every (gt row, pred row) of the same image, for the images of one chunk."""
    per_image = gt_count * pred_count
    total = int(per_image.sum())
    image = np.repeat(np.arange(len(per_image)), per_image)
    # position of each pair inside its own image's ng x np block
    offset = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(per_image) - per_image, per_image)
    width = pred_count[image]
    return gt_start[image] + offset // width, pred_start[image] + offset % width


def candidate_pairs(
    gt: BoxTable, pred: BoxTable, n_images: int, iou_floor: float, budget: int = PAIR_BUDGET
) -> CandidatePairs:
    """All same-image pairs with IoU ≥ `iou_floor` (> 0), indices into `gt` and `pred`."""
    gt_order = np.argsort(gt.image, kind="stable")
    pred_order = np.argsort(pred.image, kind="stable")
    gt_xyxy, pred_xyxy = gt.xyxy[gt_order], pred.xyxy[pred_order]
    gt_start, gt_count = _image_ranges(gt.image, n_images)
    pred_start, pred_count = _image_ranges(pred.image, n_images)
    parts = []
    for first, last in _chunks(gt_count * pred_count, budget):
        chunk = slice(first, last)
        g, p = _pairs_of_chunk(gt_start[chunk], gt_count[chunk], pred_start[chunk], pred_count[chunk])
        iou = paired_iou(gt_xyxy[g], pred_xyxy[p])
        keep = iou >= iou_floor  # pruned here, before any sorting
        parts.append(CandidatePairs(gt_order[g[keep]], pred_order[p[keep]], iou[keep]))
    return CandidatePairs.concatenate(parts)


def _first_per_key(keys: IntArray, positions: IntArray, n_keys: int) -> IntArray:
    """For each key, the smallest position among `positions` carrying it (len(keys)+ if none)."""
    first = np.full(n_keys, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, keys, positions)
    return first


def greedy_match(pairs: CandidatePairs, n_gt: int, n_pred: int) -> MatchResult:
    """Greedy one-to-one matching, highest IoU first, ties to the earlier prediction then GT.

    Equivalent to taking the best remaining pair again and again, done in rounds: a pair
    that is the best remaining pair of both its prediction and its GT box can never be
    pre-empted, so every such pair is accepted at once.
    """
    # 1. One strict total order: IoU descending, then prediction index, then GT index.
    order = np.lexsort((pairs.gt, pairs.pred, -pairs.iou))
    gt, pred, iou = pairs.gt[order], pairs.pred[order], pairs.iou[order]
    gt_match = np.full(n_gt, -1, dtype=np.int64)
    pred_match = np.full(n_pred, -1, dtype=np.int64)
    pred_iou = np.full(n_pred, np.nan)
    alive = np.arange(len(order), dtype=np.int64)  # positions in the order, still free
    while alive.size:
        # 2. Accept every pair that is first in the order for its prediction and its GT.
        best_for_pred = _first_per_key(pred[alive], alive, n_pred)
        best_for_gt = _first_per_key(gt[alive], alive, n_gt)
        won = alive[(best_for_pred[pred[alive]] == alive) & (best_for_gt[gt[alive]] == alive)]
        gt_match[gt[won]] = pred[won]
        pred_match[pred[won]] = gt[won]
        pred_iou[pred[won]] = iou[won]
        # 3. Drop every pair that touches a box matched in this round.
        alive = alive[(gt_match[gt[alive]] < 0) & (pred_match[pred[alive]] < 0)]
    return MatchResult(gt_match, pred_match, pred_iou)


def match_boxes(
    gt: BoxTable, pred: BoxTable, n_images: int, iou_min: float, budget: int = PAIR_BUDGET
) -> MatchResult:
    """Match `pred` to `gt` on each image (class-agnostic), pairs need IoU ≥ `iou_min`."""
    pairs = candidate_pairs(gt, pred, n_images, iou_min, budget)
    return greedy_match(pairs, len(gt), len(pred))
