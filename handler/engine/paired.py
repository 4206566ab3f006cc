"""Paired per-image bootstrap of two prediction sets on the same GT.

A and B are scored on the same images, so a resample draws the same images for both: the
per-image counts of A and B side by side, (n, 10), go through `resampled_counts` as one
table. Each resample's difference B - A then keeps the images' shared difficulty out of
the interval, which is why a paired interval is narrower than two separate ones.
"""

from __future__ import annotations

from fractions import Fraction

import msgspec
import numpy as np

from handler.boxes import FloatArray, IntArray
from handler.engine.bootstrap import (
    LEVEL,
    RESAMPLES,
    SEED,
    percentile_ends,
    percentile_interval,
    resample_times,
    resampled_counts,
)
from handler.engine.counts import OutcomeCounts
from handler.engine.timecost import TimeCosts


class Difference(msgspec.Struct, frozen=True):
    """B - A on all the paired images, and its percentile interval over the resamples."""

    value: float
    low: float
    high: float


class PairedBootstrap(msgspec.Struct, frozen=True):
    images: int
    resamples: int
    level: Fraction
    score: Difference
    seconds_saved: Difference


class ClassRows(msgspec.Struct, frozen=True):
    """One run's sparse outcome counts per (paired image, class) pair that has a box."""

    image: IntArray  # (k,) row among the paired images
    class_id: IntArray  # (k,) row among the classes compared
    counts: IntArray  # (k, N_OUTCOMES)

    def of_class(self, n_classes: int) -> list[tuple[IntArray, FloatArray]]:
        """Per class: its rows' images and their counts as floats (for the resample products)."""
        order = np.argsort(self.class_id, kind="stable")
        bounds = np.searchsorted(self.class_id[order], np.arange(n_classes + 1))
        weights = self.counts.astype(np.float64)
        return [
            (self.image[order[start:stop]], weights[order[start:stop]])
            for start, stop in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)
        ]

    def whole(self, n_classes: int) -> OutcomeCounts:
        summed = np.zeros((n_classes, self.counts.shape[1]), dtype=np.int64)
        np.add.at(summed, self.class_id, self.counts)
        return OutcomeCounts(summed)


def _product(times: FloatArray, weights: FloatArray) -> IntArray:
    """(rows, N_OUTCOMES): times (k, rows) of k (image, class) rows, times their counts (k, N_OUTCOMES).

    einsum's own loop, not BLAS: these small products, one per class and chunk, ran up to 300
    times slower through a multithreaded BLAS on a busy machine.
    """
    summed: FloatArray = np.einsum("kr,kc->rc", times, weights, optimize=False)
    return np.rint(summed).astype(np.int64)


def class_intervals(
    rows: tuple[ClassRows, ClassRows],
    n_images: int,
    n_classes: int,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> list[Difference]:
    """Per class, B - A of its score on the paired images and its interval, over the same resamples
    (same seed, same draws) as `paired_bootstrap`: each resample's count of each image times the
    class's (image, class) rows, so the cost is resamples times rows, one vectorised step per class."""
    by_class = [run.of_class(n_classes) for run in rows]
    differences = np.zeros((resamples, n_classes))
    for chunk, times in resample_times(n_images, resamples, seed):
        by_image = np.ascontiguousarray(times.T)  # (n, rows): a class's images are then whole rows
        for c in range(n_classes):
            (images_a, a), (images_b, b) = by_class[0][c], by_class[1][c]
            summed_a, summed_b = (
                _product(np.take(by_image, i, axis=0), w) for i, w in ((images_a, a), (images_b, b))
            )
            differences[chunk, c] = OutcomeCounts(summed_b).scores - OutcomeCounts(summed_a).scores
    value = rows[1].whole(n_classes).scores - rows[0].whole(n_classes).scores
    low, high = percentile_ends(differences)
    return [Difference(*figures) for figures in zip(value.tolist(), low.tolist(), high.tolist(), strict=True)]


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
