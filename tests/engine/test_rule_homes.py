"""The one home of each rule: Outcome's attributes, the keep rule and the exact score."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from handler.engine import Outcome
from handler.engine.evaluation import keep_mask
from handler.engine.score import assistance_score, assistance_scores, score_fraction
from handler.engine.timecost import TimeCosts


def test_each_outcome_carries_its_action_labels_and_cost() -> None:
    assert [(o.key, o.action, o.label, o.short_label) for o in Outcome] == [
        ("correct", "accept", "Correct", "Correct"),
        ("shifted", "nudge", "Shifted", "Shifted"),
        ("class_confused", "relabel", "Class-confused", "Confused"),
        ("false_positive", "delete", "False positive", "FP"),
        ("false_negative", "draw", "False negative", "FN"),
    ]
    costs = TimeCosts(accept=1, nudge=2, relabel=3, delete=4, draw=5)
    assert [costs.seconds(o) for o in Outcome] == [1, 2, 3, 4, 5]
    assert costs.per_outcome().tolist() == [1, 2, 3, 4, 5]
    assert [int(o) for o in Outcome] == [0, 1, 2, 3, 4]


def test_equal_confidence_is_kept() -> None:
    assert keep_mask(np.array([0.49, 0.5, 0.51]), 0.5).tolist() == [False, True, True]


def test_the_three_score_forms_agree() -> None:
    assert score_fraction(1, 1, 1, 4) == Fraction(1, 2) and score_fraction(0, 0, 0, 0) == 0
    assert assistance_score(9, 0, 0, 10) == 0.9 and assistance_score(0, 0, 0, 0) == 0.0
    rows = np.array([[1, 1, 1, 4], [9, 0, 0, 10], [0, 0, 0, 0], [1, 2, 0, 3]])
    scores = assistance_scores(rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3])
    assert scores.tolist() == [assistance_score(*map(int, row)) for row in rows]
