"""Assistance score and grade (SPEC §7), the grade computed exactly in integers."""

from __future__ import annotations

from typing import Final

# (grade, minimal score as a fraction numerator/denominator), best first.
GRADES: Final = (
    ("Production-grade", 9, 10),
    ("Strong assist", 6, 10),
    ("Partial assist", 3, 10),
    ("Minimal assist", 0, 1),
)
MINIMAL_GRADE: Final = GRADES[-1][0]


def _weighted_halves(correct: int, shifted: int, class_confused: int) -> int:
    """Twice the score's numerator: 2·C + S + X, an integer."""
    return 2 * correct + shifted + class_confused


def assistance_score(correct: int, shifted: int, class_confused: int, total: int) -> float:
    """(C + 0.5·S + 0.5·X) / total, 0 when total is 0."""
    if total == 0:
        return 0.0
    return _weighted_halves(correct, shifted, class_confused) / (2 * total)


def grade(correct: int, shifted: int, class_confused: int, total: int) -> str:
    """The badge: the best grade whose bound the score reaches, bounds inclusive.

    score ≥ n/d  ⇔  d·(2C + S + X) ≥ 2·n·total, so no float ever decides a bound.
    """
    halves = _weighted_halves(correct, shifted, class_confused)
    for name, numerator, denominator in GRADES:
        if total > 0 and denominator * halves >= 2 * numerator * total:
            return name
    return MINIMAL_GRADE
