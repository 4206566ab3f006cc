"""One evaluation: the confidence filter, matching and outcomes over every shared image."""

from __future__ import annotations

from dataclasses import dataclass

from handler.boxes import BoolArray, BoxTable
from handler.engine.matching import PAIR_BUDGET, match_boxes
from handler.engine.outcomes import BoxOutcomes, Tally, assign_outcomes


@dataclass(frozen=True)
class Thresholds:
    """What "good enough" means (SPEC §2): the two IoU bounds and the confidence cut."""

    iou_min: float = 0.3
    iou_perfect: float = 0.8
    confidence_threshold: float = 0.5

    def __post_init__(self) -> None:
        if not 0 < self.iou_min <= self.iou_perfect <= 1:
            raise ValueError(
                "Expected `0 < iou_min <= iou_perfect <= 1` but got "
                f"iou_min={self.iou_min}, iou_perfect={self.iou_perfect}"
            )
        if not 0 <= self.confidence_threshold <= 1:
            raise ValueError(f"Expected `confidence_threshold` in [0, 1] but got {self.confidence_threshold}")


@dataclass(frozen=True)
class Evaluation:
    """Outcomes of the GT boxes and of the kept predictions (`kept` masks the input predictions)."""

    gt: BoxTable
    pred: BoxTable
    kept: BoolArray
    outcomes: BoxOutcomes
    tally: Tally


def evaluate(
    gt: BoxTable, pred: BoxTable, n_images: int, thresholds: Thresholds, budget: int = PAIR_BUDGET
) -> Evaluation:
    """Drop predictions below the threshold (equal is kept), match, and sort into outcomes."""
    kept = pred.confidence >= thresholds.confidence_threshold
    kept_pred = pred[kept]
    match = match_boxes(gt, kept_pred, n_images, thresholds.iou_min, budget)
    outcomes = assign_outcomes(gt, kept_pred, match, thresholds.iou_perfect)
    return Evaluation(gt, kept_pred, kept, outcomes, Tally.of(outcomes))
