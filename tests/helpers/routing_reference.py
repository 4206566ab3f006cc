"""A naive reference of the per-class routing policy: per-class counts and a brute-force optimum.

Per class and threshold, the outcome counts come from `reference.evaluate_image` (FP by
predicted class, the rest by GT class); the optimum tries every combination of one choice
per class (each sweep threshold, or "draw": every GT box of the class drawn, None here).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from helpers.reference import FALSE_NEGATIVE, FALSE_POSITIVE, OUTCOME_NAMES, RefImage, evaluate_image

Counts = tuple[int, int, int, int, int]


def class_counts(
    images: list[RefImage], n_classes: int, threshold: float, iou_min: float, iou_perfect: float
) -> list[Counts]:
    rows = [[0] * len(OUTCOME_NAMES) for _ in range(n_classes)]
    for image in images:
        result = evaluate_image(image, threshold, iou_min, iou_perfect)
        for box, outcome in zip(image.gt, result.gt_outcomes, strict=True):
            rows[box.class_id][OUTCOME_NAMES.index(outcome)] += 1
        for pred, pred_outcome in zip(image.preds, result.pred_outcomes, strict=True):
            if pred_outcome == FALSE_POSITIVE:
                rows[pred.class_id][OUTCOME_NAMES.index(FALSE_POSITIVE)] += 1
    return [(r[0], r[1], r[2], r[3], r[4]) for r in rows]


def seconds(counts: Counts, costs: Sequence[float]) -> float:
    return sum(n * c for n, c in zip(counts, costs, strict=True))


def draw_counts(counts: Counts) -> Counts:
    gt = sum(counts) - counts[OUTCOME_NAMES.index(FALSE_POSITIVE)]
    drawn = [0] * len(OUTCOME_NAMES)
    drawn[OUTCOME_NAMES.index(FALSE_NEGATIVE)] = gt
    return (drawn[0], drawn[1], drawn[2], drawn[3], drawn[4])


def brute_force_seconds(
    by_threshold: list[list[Counts]], fixed: dict[int, int], costs: Sequence[float]
) -> float:
    """The fewest labeler seconds over every policy; `fixed` pins classes (guarded) to a threshold.

    `by_threshold[t][c]` are class c's counts at threshold t.
    """
    n_classes = len(by_threshold[0])
    options = [
        [by_threshold[fixed[c]][c]]
        if c in fixed
        else [row[c] for row in by_threshold] + [draw_counts(by_threshold[0][c])]
        for c in range(n_classes)
    ]
    return min(sum(seconds(rows, costs) for rows in policy) for policy in itertools.product(*options))
