"""Per-image bootstrap of the assistance score and the time saved.

Images are the resampling unit: a resample draws n images with replacement from the n scored
images and adds their outcome counts. The score and the grade of a resample come from those
summed integer counts exactly as `OutcomeCounts` decides them, so a resample's grade never rounds.

Draws: resample r, draw i takes image floor(u · n) for the next double u of a PCG64 generator
seeded with `seed`. Doubles consume one 64-bit word each, so chunking the resamples (to bound
memory) does not change the draws, and a pure-Python reference can replay them.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from typing import Final

import msgspec
import numpy as np
import numpy.typing as npt

from handler.boxes import FloatArray, IntArray
from handler.engine.counts import OutcomeCounts
from handler.engine.score import GRADES
from handler.engine.timecost import TimeCosts
from handler.forked import worker_count
from handler.kernels.resample_sums import resample_sums

SEED: Final = 20261129
# The floor: the 2.5% and 97.5% ends rest on 25 resamples each; the cost is one draw per image
# and resample.
RESAMPLES: Final = 1000
LEVEL: Final = Fraction(95, 100)
# Draws per chunk: the chunk's doubles, image indices and counters (8 bytes each, 3 MiB) stay in
# the processor's cache, where counting millions of draws at once would scatter them over a
# table of counters too big for it.
DRAWS_PER_CHUNK: Final = 1 << 17
# Draws from which `resampled_counts` gives half of the resamples to a second thread: numpy draws,
# scales and multiplies without the interpreter lock, so a second core takes about half of the
# work (below, starting a thread costs more than it gives back).
THREADED_DRAWS: Final = 1 << 23


def seeded_sample(n: int, k: int) -> IntArray:
    """k of n positions drawn once with the report's seed, ascending (all n when there are no more):
    the images the readings' probe and the recommendation's interval look at."""
    if n <= k:
        return np.arange(n, dtype=np.int64)
    return np.sort(np.random.default_rng(SEED).choice(n, k, replace=False)).astype(np.int64)


def _draws(
    n: int, resamples: int, seed: int, draws_per_chunk: int, first: int
) -> Iterator[tuple[slice, FloatArray]]:
    """Chunks of the resamples from `first` to `resamples`: their slice, and their doubles in
    [0, 1) (rows, n), one per draw; resample r's draws are the same whatever `first` is. The
    chunk's buffer is reused: each is read before the next is asked for."""
    if n == 0 or first >= resamples:
        return
    # Resample r starts at the stream's (r·n)th double, one 64-bit word each: jump there at once.
    rng = np.random.Generator(np.random.PCG64(seed).advance(first * n))
    step = min(resamples - first, max(1, draws_per_chunk // n))
    doubles = np.empty((step, n))  # one buffer for every chunk: no fresh pages per chunk
    for start in range(first, resamples, step):
        stop = min(resamples, start + step)
        rng.random(out=doubles[: stop - start])
        yield slice(start, stop), doubles[: stop - start]


def resample_times(
    n: int,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    draws_per_chunk: int = DRAWS_PER_CHUNK,
    first: int = 0,
) -> Iterator[tuple[slice, FloatArray]]:
    """Chunks of the resamples from `first` to `resamples`: their slice, and how often each drew
    each of the n images (rows, n); resample r's draws are the same whatever `first` is.

    Float64, for BLAS products with counts: exact, as integer sums stay far below 2**53.
    """
    drawn: npt.NDArray[np.intp] | None = None  # one buffer of indices for every chunk, as of doubles
    for chunk, doubles in _draws(n, resamples, seed, draws_per_chunk, first):
        rows = len(doubles)
        if drawn is None:
            drawn = np.empty(doubles.shape, dtype=np.intp)
            offsets = (np.arange(rows, dtype=np.intp) * n)[:, None]  # resample r: bins [r·n, (r+1)·n)
        doubles *= n
        np.copyto(drawn[:rows], doubles, casting="unsafe")  # truncation: floor(u · n)
        drawn[:rows] += offsets[:rows]
        times = np.bincount(drawn[:rows].ravel(), minlength=rows * n).reshape(rows, n)
        yield chunk, times.astype(np.float64)


def resampled_counts(
    counts: IntArray,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    draws_per_chunk: int = DRAWS_PER_CHUNK,
    cores: int | None = None,
) -> IntArray:
    """(resamples, m) column sums of `counts` (n, m) over images drawn with replacement
    (`kernels.resample_sums`); many draws are made on two threads, half of the resamples each,
    the same sums (when `cores`, None meaning every core of this process, are two or more)."""
    n, m = counts.shape
    summed = np.zeros((resamples, m), dtype=np.int64)
    exact = np.ascontiguousarray(counts, dtype=np.int64)

    def add(first: int, stop: int) -> None:
        for chunk, doubles in _draws(n, stop, seed, draws_per_chunk, first):
            summed[chunk] = resample_sums(doubles, exact)

    if n * resamples < THREADED_DRAWS or worker_count(cores) < 2:
        add(0, resamples)
        return summed
    half = resamples // 2
    with ThreadPoolExecutor(1) as second:
        other = second.submit(add, half, resamples)
        add(0, half)
        other.result()
    return summed


def percentile_ends(values: FloatArray, level: Fraction = LEVEL) -> FloatArray:
    """(2, ...) the interval's ends of every column of `values` (resamples on the first axis)."""
    ends: FloatArray = np.sort(values, axis=0)[list(order_statistics(len(values), level))]
    return ends


def order_statistics(resamples: int, level: Fraction = LEVEL) -> tuple[int, int]:
    """0-based ranks of the interval's ends among B sorted resamples: floor(aB/2), ceil((1-a/2)B)-1."""
    tail = (1 - level) / 2
    return math.floor(tail * resamples), math.ceil((1 - tail) * resamples) - 1


def percentile_interval(values: FloatArray, level: Fraction = LEVEL) -> tuple[float, float]:
    low, high = percentile_ends(values, level).tolist()
    return float(low), float(high)


def crosses_grade_bound(summed: IntArray, scores: FloatArray, level: Fraction = LEVEL) -> bool:
    """The resamples at the interval's two ends have different grades (decided on their counts)."""
    ranks = np.argsort(scores, kind="stable")[list(order_statistics(len(scores), level))]
    low, high = OutcomeCounts(summed[ranks]).grade_indices.tolist()
    return bool(low != high)


class Bootstrap(msgspec.Struct, frozen=True):
    """What the resamples say about one set of images."""

    images: int
    resamples: int
    level: Fraction
    score: tuple[float, float]
    seconds_saved: tuple[float, float]  # with fitted costs: their uncertainty included
    grade_shares: tuple[float, ...]  # by GRADES order, summing to 1
    borderline: bool  # the score interval crosses a grade bound
    # With fitted costs: the interval of the time saved at the fitted seconds, images only.
    seconds_saved_images_only: tuple[float, float] | None = None

    def likely_grades(self) -> list[tuple[str, float]]:
        """The grades some resample reached, most frequent first."""
        names = (name for name, _, _ in GRADES)
        found = [(name, share) for name, share in zip(names, self.grade_shares, strict=True) if share]
        return sorted(found, key=lambda item: -item[1])


def bootstrap(counts: IntArray, costs: TimeCosts, resamples: int = RESAMPLES, seed: int = SEED) -> Bootstrap:
    """Percentile intervals of the score and the time saved, and the share of resamples per grade."""
    summed = OutcomeCounts(resampled_counts(counts, resamples, seed))
    scores = summed.scores
    grades = np.bincount(summed.grade_indices, minlength=len(GRADES))
    images_only = percentile_interval(summed.seconds_saved(costs))
    drawn_costs = costs.fit.replicates if costs.fit is not None and len(costs.fit.replicates) else None
    return Bootstrap(
        images=len(counts),
        resamples=resamples,
        level=LEVEL,
        score=percentile_interval(scores),
        seconds_saved=images_only if drawn_costs is None else _with_fitted_costs(summed, drawn_costs),
        grade_shares=tuple((grades / resamples).tolist()),
        borderline=crosses_grade_bound(summed.rows, scores),
        seconds_saved_images_only=None if drawn_costs is None else images_only,
    )


def _with_fitted_costs(summed: OutcomeCounts, replicates: FloatArray) -> tuple[float, float]:
    """The time saved when each image resample is priced at one bootstrap replicate of the fitted
    seconds (resample r takes replicate r mod their number): the images and the labelers' log are
    independent samples, so drawing both in every resample carries both uncertainties."""
    prices = replicates[np.arange(len(summed.rows)) % len(replicates)]
    return percentile_interval(summed.seconds_saved_each_priced(prices))
