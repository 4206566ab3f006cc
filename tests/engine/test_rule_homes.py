"""The one home of each rule: Outcome's attributes, the keep rule and the exact score."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from handler.engine import Outcome
from handler.engine.evaluation import keep_mask
from handler.engine.score import assistance_score, assistance_scores, score_fraction
from handler.engine.timecost import ACTIONS, TimeCosts


def test_each_outcome_is_costed_by_its_own_action() -> None:
    """Every action is some outcome's, once; an outcome costs its action's seconds, through every
    path a cost is read (one outcome, the per-outcome column)."""
    assert sorted(outcome.action for outcome in Outcome) == sorted(ACTIONS)
    costs = TimeCosts(**{action: float(2**i) for i, action in enumerate(ACTIONS)})
    assert [costs.seconds(outcome) for outcome in Outcome] == [getattr(costs, o.action) for o in Outcome]
    assert costs.per_outcome().tolist() == [costs.seconds(outcome) for outcome in Outcome]


def test_outcome_codes_index_the_outcome_tables() -> None:
    """The codes in the evaluation's columns are positions in `Outcome`, and each name is its own."""
    assert [int(outcome) for outcome in Outcome] == list(range(len(Outcome)))
    for attribute in ("key", "label", "short_label", "action"):
        values = [getattr(outcome, attribute) for outcome in Outcome]
        assert len(set(values)) == len(values), f"two outcomes share a {attribute}"


def test_equal_confidence_is_kept() -> None:
    assert keep_mask(np.array([0.49, 0.5, 0.51]), 0.5).tolist() == [False, True, True]


def test_the_three_score_forms_agree() -> None:
    assert score_fraction(1, 1, 1, 4) == Fraction(1, 2) and score_fraction(0, 0, 0, 0) == 0
    assert assistance_score(9, 0, 0, 10) == 0.9 and assistance_score(0, 0, 0, 0) == 0.0
    rows = np.array([[1, 1, 1, 4], [9, 0, 0, 10], [0, 0, 0, 0], [1, 2, 0, 3]])
    scores = assistance_scores(rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3])
    assert scores.tolist() == [assistance_score(*map(int, row)) for row in rows]
