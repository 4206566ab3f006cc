"""Assistance score and grade (contract §7): the one home of the score's formula.

Everything that scores (a tally, rows of outcome counts through `counts.OutcomeCounts`, the
confidence sweep) calls these, so the weights of the five outcomes are written once
(`weighted_halves`) and the grade bounds once (`grade_indices`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Final, TypeVar

import numpy as np

from handler.boxes import FloatArray, IntArray

# (grade, minimal score as a fraction numerator/denominator), best first.
GRADES: Final = (
    ("Production-grade", 9, 10),
    ("Strong assist", 6, 10),
    ("Partial assist", 3, 10),
    ("Minimal assist", 0, 1),
)

Count = TypeVar("Count", int, IntArray)


def weighted_halves(correct: Count, shifted: Count, class_confused: Count) -> Count:
    """Twice the score's numerator: 2·C + S + X, an integer (or integers, column-wise)."""
    return 2 * correct + shifted + class_confused


def score_fraction(correct: int, shifted: int, class_confused: int, total: int) -> Fraction:
    """The exact score (C + 0.5·S + 0.5·X) / total, 0 when total is 0: comparisons never round."""
    if total == 0:
        return Fraction(0)
    return Fraction(weighted_halves(correct, shifted, class_confused), 2 * total)


def assistance_score(correct: int, shifted: int, class_confused: int, total: int) -> float:
    """The score as a float: the exact fraction, correctly rounded."""
    return float(score_fraction(correct, shifted, class_confused, total))


def assistance_scores(
    correct: IntArray, shifted: IntArray, class_confused: IntArray, total: IntArray
) -> FloatArray:
    """`assistance_score` of every row of count columns (any shape), 0 where a row is empty."""
    scores = np.zeros(np.shape(total))
    np.divide(weighted_halves(correct, shifted, class_confused), 2 * total, out=scores, where=total > 0)
    return scores


def grade_indices(
    correct: IntArray, shifted: IntArray, class_confused: IntArray, total: IntArray
) -> IntArray:
    """Index into GRADES of every row's badge: the best grade whose bound the score reaches, inclusive.

    score ≥ n/d  ⇔  d·(2C + S + X) ≥ 2·n·total, so no float ever decides a bound.
    """
    halves = weighted_halves(correct, shifted, class_confused)
    bounds = [(total > 0) & (d * halves >= 2 * n * total) for _, n, d in GRADES[:-1]]
    reached = np.stack([*bounds, np.ones(np.shape(total), dtype=bool)], axis=-1)
    indices: IntArray = np.argmax(reached, axis=-1)
    return indices


def grade(correct: int, shifted: int, class_confused: int, total: int) -> str:
    """The badge of one set of counts (`grade_indices` of one row)."""
    columns = (np.asarray(v, dtype=np.int64) for v in (correct, shifted, class_confused, total))
    return GRADES[int(grade_indices(*columns))][0]
