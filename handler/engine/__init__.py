"""IoU, greedy matching and outcomes (contract §5-7): pure numpy, no I/O."""

from handler.engine.evaluation import Evaluation, Thresholds, evaluate
from handler.engine.matching import MatchResult
from handler.engine.outcomes import OUTCOMES, Outcome, Tally, assign_outcomes
from handler.engine.score import GRADES, assistance_score, grade

__all__ = [
    "GRADES",
    "OUTCOMES",
    "Evaluation",
    "MatchResult",
    "Outcome",
    "Tally",
    "Thresholds",
    "assign_outcomes",
    "assistance_score",
    "evaluate",
    "grade",
]
