"""Kept predictions by confidence bin: per image, and by outcome over the run (one partial).

The bins are the sweep's steps from the threshold used up (`bin_edges`: [0.5, 0.55), ...,
[0.95, ...)), so a bin is what raising the threshold by one sweep step would drop. The run's
counts by outcome say how often a prediction of that confidence is right; the per-image counts
say how many of an image's boxes are of such a confidence (the review queue, engine/review.py).
Per image, not per box: the state grows with the images (at most 20 small counts each).
"""

from __future__ import annotations

from typing import Final

import msgspec
import numpy as np
import numpy.typing as npt

from handler.boxes import FloatArray, IntArray
from handler.engine.breakdowns import count_outcomes
from handler.engine.evaluation import Evaluation
from handler.engine.plugin import Analysis, ShardContext
from handler.engine.sweep import sweep_thresholds

# Per image and bin, a count in the smallest unsigned type that holds the shard's largest.
SmallCounts = npt.NDArray[np.unsignedinteger]


def bin_edges(threshold: float) -> FloatArray:
    """The bins' lower edges: the threshold used, then every sweep threshold above it."""
    return np.asarray([t for t in sweep_thresholds(threshold) if t >= threshold], dtype=np.float64)


def confidence_bin(confidence: FloatArray, edges: FloatArray) -> IntArray:
    """The bin of each kept prediction's confidence (>= edges[0]): the last edge at or below it."""
    found: IntArray = np.searchsorted(edges, confidence, side="right").astype(np.int64) - 1
    return found


class BinBlock(msgspec.Struct, frozen=True):
    """One shard's images: kept predictions per image and bin, in asset order."""

    shard: int
    per_image: SmallCounts  # (n_images, n_bins)


class ConfidenceBins(msgspec.Struct, frozen=True):
    """The bins (`edges`), every shard's block by shard (= asset order), the run's outcomes by bin."""

    edges: FloatArray
    blocks: tuple[BinBlock, ...]
    by_outcome: IntArray  # (n_bins, N_OUTCOMES) kept predictions of each bin by outcome

    def __add__(self, other: ConfidenceBins) -> ConfidenceBins:
        blocks = tuple(sorted((*self.blocks, *other.blocks), key=lambda block: block.shard))
        return ConfidenceBins(self.edges, blocks, self.by_outcome + other.by_outcome)

    @property
    def per_image(self) -> IntArray:
        """(n_images, n_bins) kept predictions of every shared image by bin, in asset order."""
        if not self.blocks:
            return np.zeros((0, len(self.edges)), dtype=np.int64)
        return np.concatenate([block.per_image for block in self.blocks]).astype(np.int64)


def _shard(evaluation: Evaluation, context: ShardContext) -> ConfidenceBins:
    edges = bin_edges(context.thresholds.confidence_threshold)
    pred, n_bins = evaluation.pred, len(edges)
    bins = confidence_bin(pred.confidence, edges)
    per_image = np.bincount(pred.image * n_bins + bins, minlength=len(context.asset_ids) * n_bins)
    # Each prediction's outcome under its bin (a GT key's slot of count_outcomes; no false positive
    # is added on top: the predictions' own outcomes hold them).
    by_outcome = count_outcomes(bins, evaluation.outcomes.pred_outcome, np.empty(0, np.int64), n_bins)
    small = per_image.astype(np.min_scalar_type(int(per_image.max(initial=0))))
    block = BinBlock(context.shard, small.reshape(-1, n_bins))
    return ConfidenceBins(edges, (block,), by_outcome)


def _value(bins: ConfidenceBins) -> object:
    """Blocks differ by split; the bins, the per-image counts and the run's counts do not."""
    return (bins.edges.tolist(), bins.per_image.tolist(), bins.by_outcome.tolist())


CONFIDENCE_BINS: Final = Analysis[ConfidenceBins]("confidence_bins", _shard, ConfidenceBins.__add__, _value)
