"""Per-class pre-labeling policy: pre-label each class at its own threshold, or let labelers draw it.

From the merged per-class sweep counts (n_classes, n_thresholds, 5): for every class, each
sweep threshold is a candidate row of outcome counts, and "draw" is the row where its GT
boxes are all drawn from scratch and none of its predictions is shown. The policy takes
the row with the fewest labeler seconds per class. Classes are treated as independent:
hiding one class's predictions is assumed not to change how the others match (a
prediction of one class can in fact be a class-confused match of another class's box).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from handler.boxes import BoolArray, FloatArray, IntArray
from handler.engine.counts import OutcomeCounts
from handler.engine.outcomes import Outcome
from handler.engine.timecost import TimeCosts

# A class with fewer boxes than this (GT objects plus its false positives at the single
# threshold) keeps the single threshold: its own optimum would fit noise.
MIN_CLASS_BOXES: Final = 30
DRAW: Final = -1  # the choice "do not pre-label this class"


@dataclass(frozen=True)
class RoutingPolicy:
    """Per class: the chosen sweep column (DRAW for none), and the seconds of each choice."""

    choice: IntArray  # (n_classes,) index into the sweep thresholds, or DRAW
    guarded: BoolArray  # (n_classes,) kept the single threshold for lack of boxes
    seconds: FloatArray  # (n_classes,) labeler seconds of the chosen row
    single_seconds: FloatArray  # (n_classes,) labeler seconds at the single threshold
    scratch_seconds: FloatArray  # (n_classes,) seconds to draw every GT box of the class
    counts: IntArray  # (5,) outcome counts of the whole policy


def draw_rows(class_sweep: IntArray) -> IntArray:
    """(n_classes, 5): every GT box of the class drawn (a false negative), no prediction shown."""
    gt = OutcomeCounts(class_sweep[:, 0, :]).gt_boxes
    rows = np.zeros((len(class_sweep), len(Outcome)), dtype=np.int64)
    rows[:, Outcome.FALSE_NEGATIVE] = gt
    return rows


def route(class_sweep: IntArray, used: int, costs: TimeCosts) -> RoutingPolicy:
    """The policy with the fewest labeler seconds, class by class.

    `used` is the column of the single threshold (the sweep always has it). Ties keep the
    single threshold, else the lowest threshold; "draw" only when strictly faster than all.
    """
    rows = np.arange(len(class_sweep))
    draw = draw_rows(class_sweep)
    seconds = OutcomeCounts(class_sweep).labeler_seconds(costs)  # (n_classes, n_thresholds)
    draw_seconds = OutcomeCounts(draw).labeler_seconds(costs)
    fastest = seconds == seconds.min(axis=1, keepdims=True)
    best = np.where(fastest[:, used], used, np.argmax(fastest, axis=1))  # thresholds ascend
    guarded = class_sweep[:, used, :].sum(axis=1) < MIN_CLASS_BOXES
    choice = np.where(draw_seconds < seconds[rows, best], DRAW, best)
    choice = np.where(guarded, used, choice)
    chosen = np.where((choice == DRAW)[:, None], draw, class_sweep[rows, np.maximum(choice, 0)])
    return RoutingPolicy(
        choice=choice.astype(np.int64),
        guarded=guarded,
        seconds=OutcomeCounts(chosen).labeler_seconds(costs),
        single_seconds=seconds[:, used],
        scratch_seconds=draw_seconds,
        counts=chosen.sum(axis=0).astype(np.int64),
    )
