"""Box transitions between two prediction sets on one GT: each GT box's outcome under A beside its
outcome under B (the same box: same asset, same position in the GT file), counted as a matrix.

A GT box is correct, shifted, class-confused or missed (`GT_OUTCOMES`); a transition is *worse*
when B's outcome costs the labeler more seconds than A's at the run's costs (the one criterion of
the report), *better* when it costs fewer.
"""

from __future__ import annotations

from functools import cached_property
from typing import Final

import msgspec
import numpy as np

from handler.boxes import BoolArray, FloatArray, IntArray
from handler.engine.analyses.gt_outcomes import GtBoxes
from handler.engine.counts import OutcomeCounts
from handler.engine.outcomes import N_OUTCOMES, Outcome
from handler.engine.timecost import TimeCosts

# What a GT box can be, the matrix's rows (A) and columns (B), in this order.
GT_OUTCOMES: Final = (Outcome.CORRECT, Outcome.SHIFTED, Outcome.CLASS_CONFUSED, Outcome.FALSE_NEGATIVE)
_POSITION: Final = np.full(N_OUTCOMES, -1, dtype=np.int64)
_POSITION[list(GT_OUTCOMES)] = np.arange(len(GT_OUTCOMES))


class Transitions(msgspec.Struct, frozen=True, dict=True):
    """The GT boxes both runs scored, row for row: `a[rows_a[i]]` and `b[rows_b[i]]` are one box."""

    a: GtBoxes
    b: GtBoxes
    rows_a: IntArray
    rows_b: IntArray
    costs: TimeCosts

    @cached_property
    def outcome_a(self) -> IntArray:
        found: IntArray = self.a.outcome[self.rows_a]
        return found

    @cached_property
    def outcome_b(self) -> IntArray:
        found: IntArray = self.b.outcome[self.rows_b]
        return found

    @property
    def matrix(self) -> IntArray:
        """(4, 4) counts: row A's outcome, column B's (`GT_OUTCOMES` order)."""
        cells = _POSITION[self.outcome_a] * len(GT_OUTCOMES) + _POSITION[self.outcome_b]
        return np.bincount(cells, minlength=len(GT_OUTCOMES) ** 2).reshape(len(GT_OUTCOMES), -1)

    @cached_property
    def added_seconds(self) -> FloatArray:
        """Per box, B's correction seconds minus A's (> 0: worse under B)."""
        each = OutcomeCounts(np.eye(N_OUTCOMES, dtype=np.int64)).labeler_seconds(self.costs)  # one box each
        found: FloatArray = each[self.outcome_b] - each[self.outcome_a]
        return found

    def by_image(self, worse: BoolArray) -> IntArray:
        """Per image of A (its `asset_ids`), how many paired boxes `worse` marks."""
        return np.bincount(self.a.image[self.rows_a][worse], minlength=len(self.a.asset_ids))


def _keys(boxes: GtBoxes, image: IntArray, width: int) -> IntArray:
    """One number per box: its image (into A's assets) and its position in the GT file."""
    found: IntArray = image * width + boxes.source_index
    return found


def box_transitions(a: GtBoxes, b: GtBoxes, costs: TimeCosts) -> Transitions:
    """Pair the GT boxes of two runs by asset id and position in the GT file (the GT is read once,
    the same way for both: a box absent from one run is on an image only the other scored)."""
    assets = {asset: i for i, asset in enumerate(a.asset_ids)}
    b_image = np.array([assets.get(asset, -1) for asset in b.asset_ids] or [-1], dtype=np.int64)[b.image]
    width = int(max(a.source_index.max(initial=0), b.source_index.max(initial=0))) + 1
    shared = np.flatnonzero(b_image >= 0)
    keys_a, keys_b = _keys(a, a.image, width), _keys(b, b_image, width)[shared]
    # sorted by key: in asset order, then the GT file's, however the runs were split
    _, rows_a, found = np.intersect1d(keys_a, keys_b, assume_unique=True, return_indices=True)
    return Transitions(a, b, rows_a, shared[found], costs)
