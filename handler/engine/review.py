"""The review queue: every shared image, most expected correction time first, with the kept
predictions of uncertain confidence counted per image (docs/review-queue.md says why so).

An image's expected seconds are its outcome counts priced by the run's costs (the same figure
`images_with_most_work` and the report's "with the predictions" total add up). A prediction is
*right* when the labeler keeps it (correct: accept; shifted: nudge) and *wrong* when it goes or
its label does (false positive: delete; class-confused: relabel). A confidence bin (the sweep's
steps above the threshold, analyses/confidence_bins.py) is *uncertain* when the run's own
predictions of that confidence are about as likely wrong as right: between a third and two
thirds right, once adjacent bins are pooled so that the share never falls as confidence rises.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Final

import msgspec
import numpy as np

from handler.boxes import BoolArray, FloatArray, IntArray
from handler.engine.analyses.confidence_bins import CONFIDENCE_BINS, confidence_bin
from handler.engine.analyses.per_image import PER_IMAGE
from handler.engine.breakdowns import review_order
from handler.engine.counts import OutcomeCounts
from handler.engine.outcomes import Outcome
from handler.engine.state import EvaluationState
from handler.engine.timecost import TimeCosts

RIGHT: Final = (Outcome.CORRECT, Outcome.SHIFTED)
# "About as likely wrong as right": odds within 2:1 either way.
UNCERTAIN_SHARES: Final = (Fraction(1, 3), Fraction(2, 3))
# A pooled bin with fewer kept predictions says too little about its share to be called uncertain.
MIN_BIN_PREDICTIONS: Final = 20


def pooled_shares(right: IntArray, kept: IntArray) -> tuple[IntArray, IntArray]:
    """(right, kept) of each bin's pool: adjacent bins pooled until the share right never falls
    as confidence rises (isotonic regression by pool-adjacent-violators, on the integers).

    A model's right share is taken to grow with its confidence; a bin that breaks that (a few
    predictions, by chance) is judged with its neighbours. Empty bins stay empty (0, 0). A loop
    over the bins (at most 21), not the boxes.
    """
    pools: list[list[int]] = []  # [right, kept, first bin]
    for b in np.flatnonzero(kept).tolist():
        pools.append([int(right[b]), int(kept[b]), b])
        while len(pools) > 1 and pools[-2][0] * pools[-1][1] > pools[-1][0] * pools[-2][1]:
            r, k, _ = pools.pop()
            pools[-1][0] += r
            pools[-1][1] += k
    pooled_right, pooled_kept = np.zeros(len(kept), np.int64), np.zeros(len(kept), np.int64)
    ends = [pool[2] for pool in pools[1:]] + [len(kept)] * bool(pools)
    for (r, k, first), end in zip(pools, ends, strict=True):
        pooled_right[first:end], pooled_kept[first:end] = r, k
    has_boxes = kept > 0
    return pooled_right * has_boxes, pooled_kept * has_boxes


def uncertain_bins(by_outcome: IntArray) -> BoolArray:
    """(n_bins,) bins whose pool (`pooled_shares`) of at least MIN_BIN_PREDICTIONS kept
    predictions is right between 1/3 and 2/3 of the time, decided on the integers."""
    right, kept = pooled_shares(by_outcome[:, list(RIGHT)].sum(axis=1), by_outcome.sum(axis=1))
    low, high = UNCERTAIN_SHARES
    within = (right * low.denominator >= kept * low.numerator) & (
        right * high.denominator <= kept * high.numerator
    )
    found: BoolArray = within & (kept >= MIN_BIN_PREDICTIONS)
    return found


class ReviewQueue(msgspec.Struct, frozen=True):
    """Per shared image in asset order, and `order`: the rows as a lead should review them."""

    asset_ids: list[str]
    counts: IntArray  # (n_images, N_OUTCOMES)
    seconds: FloatArray  # (n_images,) expected labeler seconds with the predictions
    uncertain: IntArray  # (n_images,) kept predictions in an uncertain bin
    order: IntArray  # (n_images,) rows, most seconds first
    edges: FloatArray  # (n_bins,) the bins' lower edges
    by_outcome: IntArray  # (n_bins, N_OUTCOMES) the run's kept predictions by bin and outcome
    uncertain_bin: BoolArray  # (n_bins,)

    def uncertain_at(self, confidence: FloatArray) -> BoolArray:
        """Whether each kept prediction's confidence falls in an uncertain bin."""
        found: BoolArray = self.uncertain_bin[np.maximum(confidence_bin(confidence, self.edges), 0)]
        return found


def review_queue(state: EvaluationState, costs: TimeCosts) -> ReviewQueue:
    images, bins = state.of(PER_IMAGE), state.of(CONFIDENCE_BINS)
    counts = images.counts
    seconds = OutcomeCounts(counts).labeler_seconds(costs)
    uncertain_bin = uncertain_bins(bins.by_outcome)
    return ReviewQueue(
        asset_ids=images.asset_ids,
        counts=counts,
        seconds=seconds,
        uncertain=bins.per_image[:, uncertain_bin].sum(axis=1),
        order=review_order(seconds),
        edges=bins.edges,
        by_outcome=bins.by_outcome,
        uncertain_bin=uncertain_bin,
    )
