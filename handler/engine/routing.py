"""The recommendation: pre-label each class at its own threshold, or let labelers draw it, or all
of them at the one best threshold; whichever saves the most labeler time.

One criterion decides everything here: labeler seconds (the fewest is best). From the merged
per-class sweep counts (n_classes, n_thresholds, 5): the best single threshold is the sweep
column with the fewest seconds over every class; then each class with enough boxes takes its own
fastest row (a sweep column, or "draw": its GT boxes all drawn, none of its predictions shown),
and a class with too few boxes takes the best single threshold, whose own optimum would fit noise.
Every class's row is at most its row at the best single threshold, so the policy never costs more
than the best single threshold (nor any threshold of the sweep). Classes are treated as
independent: hiding one class's predictions is assumed not to change how the others match (a
prediction of one class can in fact be a class-confused match of another class's box).
"""

from __future__ import annotations

from typing import Final

import msgspec
import numpy as np

from handler.boxes import BoolArray, FloatArray, IntArray
from handler.engine.breakdowns import counts_by_image
from handler.engine.counts import OutcomeCounts
from handler.engine.evaluation import Evaluation, Thresholds, evaluate_pairs
from handler.engine.outcomes import Outcome
from handler.engine.timecost import TimeCosts

# A class with fewer boxes than this (GT objects plus its false positives at the best single
# threshold) takes the best single threshold: its own optimum would fit noise.
MIN_CLASS_BOXES: Final = 30
DRAW: Final = -1  # the choice "do not pre-label this class"


class RoutingPolicy(msgspec.Struct, frozen=True):
    """Per class: the chosen sweep column (DRAW for none), and the seconds of each choice."""

    best_single: int  # the sweep column with the fewest labeler seconds over every class
    choice: IntArray  # (n_classes,) index into the sweep thresholds, or DRAW
    own: IntArray  # (n_classes,) each class's own fastest choice, whatever its boxes (per-class)
    guarded: BoolArray  # (n_classes,) took the best single threshold for lack of boxes
    seconds: FloatArray  # (n_classes,) labeler seconds of the chosen row
    used_seconds: FloatArray  # (n_classes,) labeler seconds at the threshold given
    best_single_seconds: FloatArray  # (n_classes,) labeler seconds at the best single threshold
    scratch_seconds: FloatArray  # (n_classes,) seconds to draw every GT box of the class
    counts: IntArray  # (5,) outcome counts of the whole policy


def draw_rows(class_sweep: IntArray) -> IntArray:
    """(n_classes, 5): every GT box of the class drawn (a false negative), no prediction shown."""
    gt = OutcomeCounts(class_sweep[:, 0, :]).gt_boxes
    rows = np.zeros((len(class_sweep), len(Outcome)), dtype=np.int64)
    rows[:, Outcome.FALSE_NEGATIVE] = gt
    return rows


def best_single(seconds_by_column: FloatArray, used: int) -> int:
    """The column with the fewest seconds; on a tie the used one, else the lowest threshold."""
    fastest = np.flatnonzero(seconds_by_column == seconds_by_column.min())
    return used if used in fastest else int(fastest[0])


def _fastest(seconds: FloatArray, draw_seconds: FloatArray, prefer: int) -> IntArray:
    """Each row's fastest column (ties: `prefer`, else the lowest), DRAW when strictly faster."""
    fastest = seconds == seconds.min(axis=1, keepdims=True)
    best = np.where(fastest[:, prefer], prefer, np.argmax(fastest, axis=1))  # thresholds ascend
    rows = np.arange(len(seconds))
    return np.where(draw_seconds < seconds[rows, best], DRAW, best).astype(np.int64)


def route(class_sweep: IntArray, used: int, costs: TimeCosts) -> RoutingPolicy:
    """The recommendation over the sweep's (n_classes, n_thresholds, 5) counts; `used` is the
    column of the threshold given (the sweep always has it)."""
    rows = np.arange(len(class_sweep))
    draw = draw_rows(class_sweep)
    seconds = OutcomeCounts(class_sweep).labeler_seconds(costs)  # (n_classes, n_thresholds)
    draw_seconds = OutcomeCounts(draw).labeler_seconds(costs)
    # From the summed integer counts, as `Sweep.choice` decides it: the same column, ties included.
    by_column = OutcomeCounts(class_sweep.sum(axis=0)).labeler_seconds(costs)
    single = best_single(by_column, used) if len(class_sweep) else used
    own = _fastest(seconds, draw_seconds, single)
    guarded = class_sweep[:, single, :].sum(axis=1) < MIN_CLASS_BOXES
    choice = np.where(guarded, single, own)
    chosen = np.where((choice == DRAW)[:, None], draw, class_sweep[rows, np.maximum(choice, 0)])
    return RoutingPolicy(
        best_single=single,
        choice=choice,
        own=own,
        guarded=guarded,
        seconds=OutcomeCounts(chosen).labeler_seconds(costs),
        used_seconds=seconds[:, used],
        best_single_seconds=seconds[:, single],
        scratch_seconds=draw_seconds,
        counts=chosen.sum(axis=0).astype(np.int64),
    )


def counts_under_policy(
    evaluation: Evaluation, class_thresholds: FloatArray, thresholds: Thresholds, n_images: int
) -> IntArray:
    """(n_images, 5) outcome counts with each prediction kept at its class's threshold
    (`class_thresholds` by class id; +inf draws the class: none of its predictions is shown, and
    its GT boxes that nothing else matches are drawn). The whole policy applied to these images,
    matching as the run does (one greedy pass over every class): what the recommendation's
    interval resamples."""
    pred = evaluation.all_pred
    applied = evaluate_pairs(
        evaluation.gt, pred, evaluation.pairs, thresholds, class_thresholds[pred.class_id]
    )
    return counts_by_image(applied, n_images)
