"""One evaluation: the confidence filter, matching and outcomes over every shared image.

The IoU work is done once: `candidate_pairs` over every prediction (before the confidence
filter) down to IOU_MIN, and over the false positives down to `pair_floor`, so the main
evaluation, the confidence sweep and the near misses all select from the same pairs instead of
computing IoU again. Only false positives are read below IOU_MIN (near misses, suspected GT
errors), and the wide windows of the low floor cost the most, so the others skip them.
"""

from __future__ import annotations

from typing import Final

import msgspec
import numpy as np
from msgspec.structs import replace

from handler.boxes import BoolArray, BoxTable, FloatArray
from handler.engine.matching import PAIR_BUDGET, CandidatePairs, MatchResult, candidate_pairs, greedy_match
from handler.engine.outcomes import BoxOutcomes, Outcome, Tally, assign_outcomes

# Near misses start at this IoU, so candidate pairs are kept down to it.
NEAR_MISS_FLOOR: Final = 0.1


class Thresholds(msgspec.Struct, frozen=True):
    """What "good enough" means (contract §2): the two IoU bounds and the confidence cut.

    No defaults here: node.json holds them (`handler.inputs.DEFAULT_THRESHOLDS`).
    """

    iou_min: float
    iou_perfect: float
    confidence_threshold: float

    def __post_init__(self) -> None:
        if not 0 < self.iou_min <= self.iou_perfect <= 1:
            raise ValueError(
                "Expected `0 < iou_min <= iou_perfect <= 1` but got "
                f"iou_min={self.iou_min}, iou_perfect={self.iou_perfect}"
            )
        if not 0 <= self.confidence_threshold <= 1:
            raise ValueError(f"Expected `confidence_threshold` in [0, 1] but got {self.confidence_threshold}")


class Evaluation(msgspec.Struct, frozen=True):
    """Outcomes of the GT boxes and of the kept predictions (`kept` masks the input predictions).

    `all_pred` is every input prediction and `pairs` every same-image pair with IoU ≥ `iou_min`,
    and those of the false positives down to `pair_floor(iou_min)`, indexing `gt` and `all_pred`
    (`evaluate`), in the greedy order: what later analyses re-use. `pred` has every column of the
    kept predictions but their masks: those are `all_pred`'s rows where `kept`.
    """

    gt: BoxTable
    pred: BoxTable
    kept: BoolArray
    outcomes: BoxOutcomes
    tally: Tally
    all_pred: BoxTable
    pairs: CandidatePairs


def keep_mask(confidence: FloatArray, threshold: float | FloatArray) -> BoolArray:
    """contract §3, the one home of the rule: a prediction is kept when confidence ≥ threshold (one
    threshold, or each prediction's own; NaN keeps none)."""
    kept: BoolArray = confidence >= threshold
    return kept


def pair_floor(iou_min: float) -> float:
    """The lowest IoU any analysis looks at: near misses from 0.1, matches from `iou_min`."""
    return min(NEAR_MISS_FLOOR, iou_min)


def match_kept(pairs: CandidatePairs, kept: BoolArray, iou_min: float, n_gt: int) -> MatchResult:
    """Greedy matching of the kept predictions only, on pairs computed over all of them.

    The result indexes the kept predictions (as `pred[kept]` would); renumbering keeps the
    input order, so ties break exactly as matching `pred[kept]` from scratch.
    """
    usable = pairs[kept[pairs.pred] & (pairs.iou >= iou_min)]
    renumber = np.cumsum(kept, dtype=np.int64) - 1
    usable = CandidatePairs(usable.gt, renumber[usable.pred], usable.iou)
    return greedy_match(usable, n_gt, int(np.count_nonzero(kept)))


def evaluate_pairs(
    gt: BoxTable,
    pred: BoxTable,
    pairs: CandidatePairs,
    thresholds: Thresholds,
    each_threshold: FloatArray | None = None,
) -> Evaluation:
    """Drop predictions below the threshold (`keep_mask`; `each_threshold`: each prediction's own,
    as a per-class policy keeps them), match, and sort into outcomes."""
    cut = thresholds.confidence_threshold if each_threshold is None else each_threshold
    kept = keep_mask(pred.confidence, cut)
    # The kept rows' masks are read from `all_pred`: a copy of them would be held beside every
    # prediction's through the shard.
    kept_pred = pred.with_columns(masks=None)[kept]
    match = match_kept(pairs, kept, thresholds.iou_min, len(gt))
    outcomes = assign_outcomes(gt, kept_pred, match, thresholds.iou_perfect)
    return Evaluation(gt, kept_pred, kept, outcomes, Tally.of(outcomes), pred, pairs)


def _with_near_pairs(evaluation: Evaluation, pairs: CandidatePairs, iou_min: float) -> Evaluation:
    """The evaluation holding `pairs` at or above iou_min, and below it only the false positives'."""
    false_positive = np.zeros(len(evaluation.all_pred), dtype=bool)
    false_positive[evaluation.kept] = evaluation.outcomes.pred_outcome == Outcome.FALSE_POSITIVE
    return replace(evaluation, pairs=pairs[(pairs.iou >= iou_min) | false_positive[pairs.pred]])


def evaluate(
    gt: BoxTable, pred: BoxTable, n_images: int, thresholds: Thresholds, budget: int = PAIR_BUDGET
) -> Evaluation:
    """Candidate pairs once, then the evaluation at the thresholds (`Evaluation.pairs`).

    In one pass down to `pair_floor` when that is iou_min or most predictions are kept (two
    passes would then cover most of them twice), else in two: every prediction from iou_min,
    which the matching needs, then the false positives it leaves from the floor (the first
    part is all above the second, so the two stay in the greedy order).
    """
    iou_min, floor = thresholds.iou_min, pair_floor(thresholds.iou_min)
    kept = keep_mask(pred.confidence, thresholds.confidence_threshold)
    if floor == iou_min or 2 * int(np.count_nonzero(kept)) > len(pred):
        pairs = candidate_pairs(gt, pred, n_images, floor, budget)
        return _with_near_pairs(evaluate_pairs(gt, pred, pairs, thresholds), pairs, iou_min)
    evaluation = evaluate_pairs(gt, pred, candidate_pairs(gt, pred, n_images, iou_min, budget), thresholds)
    rows = np.flatnonzero(kept)[evaluation.outcomes.pred_outcome == Outcome.FALSE_POSITIVE]
    near = candidate_pairs(gt, pred[rows], n_images, floor, budget)
    near = near[near.iou < iou_min]  # `rows` ascend: renumbered, the pairs keep the greedy order
    pairs = CandidatePairs.concatenate([evaluation.pairs, CandidatePairs(near.gt, rows[near.pred], near.iou)])
    return replace(evaluation, pairs=pairs)


def near_pairs(evaluation: Evaluation, low: float, iou_min: float) -> BoolArray:
    """Per candidate pair: a false positive on a missed GT box of its class with low ≤ IoU < iou_min."""
    outcomes, pairs, gt, pred = evaluation.outcomes, evaluation.pairs, evaluation.gt, evaluation.all_pred
    false_positive = np.zeros(len(pred), dtype=bool)  # over all predictions, as `pairs` index them
    false_positive[evaluation.kept] = outcomes.pred_outcome == Outcome.FALSE_POSITIVE
    missed = outcomes.gt_outcome == Outcome.FALSE_NEGATIVE
    near: BoolArray = (
        false_positive[pairs.pred]
        & missed[pairs.gt]
        & (gt.class_id[pairs.gt] == pred.class_id[pairs.pred])
        & (pairs.iou >= low)
        & (pairs.iou < iou_min)
    )
    return near
