"""Paired per-image bootstrap of two prediction sets on the same GT (issue 13, item 4).

A and B are scored on the same images, so a resample draws the same images for both: the
per-image counts of A and B side by side, (n, 10), go through `resampled_counts` as one
table. Each resample's difference B - A then keeps the images' shared difficulty out of
the interval, which is why a paired interval is narrower than two separate ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from handler.boxes import FloatArray, IntArray
from handler.engine.bootstrap import (
    LEVEL,
    RESAMPLES,
    SEED,
    percentile_interval,
    resampled_counts,
)
from handler.engine.counts import OutcomeCounts
from handler.engine.timecost import TimeCosts


@dataclass(frozen=True)
class Difference:
    """B - A on all the paired images, and its percentile interval over the resamples."""

    value: float
    low: float
    high: float


@dataclass(frozen=True)
class PairedBootstrap:
    images: int
    resamples: int
    level: Fraction
    score: Difference
    seconds_saved: Difference


def paired_images(ids_a: list[str], ids_b: list[str]) -> tuple[IntArray, IntArray]:
    """Rows of A and of B with the same asset id, in A's asset order."""
    _, rows_a, rows_b = np.intersect1d(
        np.asarray(ids_a, dtype=str), np.asarray(ids_b, dtype=str), assume_unique=True, return_indices=True
    )
    order = np.argsort(rows_a, kind="stable")
    return rows_a[order].astype(np.int64), rows_b[order].astype(np.int64)


def _difference(whole: FloatArray, resampled: FloatArray) -> Difference:
    low, high = percentile_interval(resampled)
    return Difference(float(whole[0]), low, high)


def paired_bootstrap(
    counts_a: IntArray, counts_b: IntArray, costs: TimeCosts, resamples: int = RESAMPLES, seed: int = SEED
) -> PairedBootstrap:
    """Intervals of B - A of the score and of the time saved, over the same resampled images."""
    summed = resampled_counts(np.hstack((counts_a, counts_b)), resamples, seed)
    split = counts_a.shape[1]
    a, b = OutcomeCounts(summed[:, :split]), OutcomeCounts(summed[:, split:])
    whole_a = OutcomeCounts(counts_a.sum(axis=0, keepdims=True))
    whole_b = OutcomeCounts(counts_b.sum(axis=0, keepdims=True))
    return PairedBootstrap(
        images=len(counts_a),
        resamples=resamples,
        level=LEVEL,
        score=_difference(whole_b.scores - whole_a.scores, b.scores - a.scores),
        seconds_saved=_difference(
            whole_b.seconds_saved(costs) - whole_a.seconds_saved(costs),
            b.seconds_saved(costs) - a.seconds_saved(costs),
        ),
    )
