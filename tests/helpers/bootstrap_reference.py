"""A deliberately naive per-image bootstrap, for checking `handler/engine/bootstrap.py`.

One resample, one draw at a time, Python integers and Fractions: resample r, draw i takes image
int(u * n) for the next double u of `numpy.random.default_rng(seed)` (the same draws as the engine,
one scalar at a time). Interval ends are the sorted resamples at ranks floor(a*B/2) and
ceil((1 - a/2)*B) - 1, a = 1 - level; grades are the reference's exact Fractions.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from helpers.reference import GRADE_BOUNDS, grade, score

# Outcome order: correct, shifted, class-confused, false positive, false negative.
Counts = tuple[int, int, int, int, int]


@dataclass(frozen=True)
class RefBootstrap:
    score: tuple[float, float]
    seconds_saved: tuple[float, float]
    grade_shares: dict[str, Fraction]
    borderline: bool


def resample(images: list[Counts], resamples: int, seed: int) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    n, sums = len(images), []
    for _ in range(resamples):
        total = [0] * len(images[0])
        for _ in range(n):
            drawn = images[int(rng.random() * n)]
            total = [a + b for a, b in zip(total, drawn, strict=True)]
        sums.append(total)
    return sums


def _score(c: list[int]) -> Fraction:
    return score(c[0], c[1], c[2], sum(c))


def _saved(c: list[int], costs: Counts | tuple[float, ...]) -> float:
    accept, nudge, relabel, delete, draw = costs
    with_predictions = c[0] * accept + c[1] * nudge + c[2] * relabel + c[3] * delete + c[4] * draw
    return (sum(c) - c[3]) * draw - with_predictions


def reference_bootstrap(
    images: list[Counts], costs: tuple[float, ...], resamples: int, seed: int, level: Fraction
) -> RefBootstrap:
    sums = resample(images, resamples, seed)
    tail = (1 - level) / 2
    low, high = math.floor(tail * resamples), math.ceil((1 - tail) * resamples) - 1
    by_score = sorted(range(resamples), key=lambda r: _score(sums[r]))  # stable, like the engine's argsort
    saved = sorted(_saved(c, costs) for c in sums)
    grades = [grade(c[0], c[1], c[2], sum(c)) for c in sums]
    ends = [grades[by_score[low]], grades[by_score[high]]]
    return RefBootstrap(
        score=(float(_score(sums[by_score[low]])), float(_score(sums[by_score[high]]))),
        seconds_saved=(saved[low], saved[high]),
        grade_shares={name: Fraction(grades.count(name), resamples) for name, _ in GRADE_BOUNDS},
        borderline=ends[0] != ends[1],
    )


@dataclass(frozen=True)
class RefPaired:
    score: tuple[float, float, float]  # B - A on all images, low, high
    seconds_saved: tuple[float, float, float]


def reference_paired(
    a: list[Counts], b: list[Counts], costs: tuple[float, ...], resamples: int, seed: int, level: Fraction
) -> RefPaired:
    """The same draws for A and B: resample the images' ten counts (A's five, then B's) together."""
    sums = resample([(*x, *y) for x, y in zip(a, b, strict=True)], resamples, seed)
    tail = (1 - level) / 2
    low, high = math.floor(tail * resamples), math.ceil((1 - tail) * resamples) - 1

    def whole(images: list[Counts]) -> list[int]:
        return [sum(column) for column in zip(*images, strict=True)]

    def interval(value: Callable[[list[int]], float]) -> tuple[float, float, float]:
        ordered = sorted(value(c[5:]) - value(c[:5]) for c in sums)
        return value(whole(b)) - value(whole(a)), ordered[low], ordered[high]

    return RefPaired(
        score=interval(lambda c: float(_score(c))),
        seconds_saved=interval(lambda c: _saved(c, costs)),
    )
