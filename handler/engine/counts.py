"""Rows of outcome counts and what each row says: the one home of scoring a row (contract §7).

A row is the five outcome counts of anything (a run, an image, a class, a slice, a class at a
sweep threshold, a bootstrap resample); `OutcomeCounts` holds any number of them as an
(..., N_OUTCOMES) array and gives, row by row, the assistance score and grade (decided on the
integers by `score.py`), the GT boxes (every outcome but false positives) and the labeler's
seconds with the predictions and from scratch.
"""

from __future__ import annotations

import msgspec
import numpy as np

from handler.boxes import FloatArray, IntArray
from handler.engine.outcomes import Outcome
from handler.engine.score import GRADES, assistance_scores, grade_indices
from handler.engine.timecost import TimeCosts, TimeEstimate


class OutcomeCounts(msgspec.Struct, frozen=True):
    """(..., N_OUTCOMES) outcome counts in `Outcome` order; every figure is per row (last axis)."""

    rows: IntArray

    def column(self, outcome: Outcome) -> IntArray:
        found: IntArray = self.rows[..., outcome]
        return found

    @property
    def total(self) -> IntArray:
        summed: IntArray = self.rows.sum(axis=-1)
        return summed

    @property
    def gt_boxes(self) -> IntArray:
        """The GT boxes behind each row: every outcome but the false positives."""
        return self.total - self.column(Outcome.FALSE_POSITIVE)

    def _score_columns(self) -> tuple[IntArray, IntArray, IntArray, IntArray]:
        columns = (Outcome.CORRECT, Outcome.SHIFTED, Outcome.CLASS_CONFUSED)
        correct, shifted, confused = (self.column(outcome) for outcome in columns)
        return correct, shifted, confused, self.total

    @property
    def scores(self) -> FloatArray:
        """Assistance score of every row, 0 where a row has no box."""
        return assistance_scores(*self._score_columns())

    @property
    def grade_indices(self) -> IntArray:
        """Index into GRADES of every row's grade, decided on the integers."""
        return grade_indices(*self._score_columns())

    @property
    def grade(self) -> str:
        """The grade of a single row (`rows` of shape (N_OUTCOMES,))."""
        return GRADES[int(self.grade_indices)][0]

    @property
    def score(self) -> float:
        """The score of a single row (`rows` of shape (N_OUTCOMES,))."""
        return float(self.scores)

    def labeler_seconds(self, costs: TimeCosts) -> FloatArray:
        """Seconds with the predictions: each outcome costs its action."""
        seconds: FloatArray = self.rows @ costs.per_outcome()
        return seconds

    def scratch_seconds(self, costs: TimeCosts) -> FloatArray:
        """Seconds without predictions: every GT box drawn."""
        return (self.gt_boxes * costs.draw).astype(np.float64)

    def seconds_saved(self, costs: TimeCosts) -> FloatArray:
        return self.scratch_seconds(costs) - self.labeler_seconds(costs)

    def seconds_saved_each_priced(self, seconds: FloatArray) -> FloatArray:
        """Seconds saved by each row (rows, N_OUTCOMES) at its own seconds per action, a row of
        `seconds` (rows, N_OUTCOMES) in Outcome order: the bootstrap's draw of fitted costs."""
        labeler = np.einsum("ij,ij->i", self.rows, seconds)
        saved: FloatArray = self.gt_boxes * seconds[:, Outcome.FALSE_NEGATIVE] - labeler
        return saved

    def time_estimate(self, costs: TimeCosts) -> TimeEstimate:
        """With and without the predictions, for a single row."""
        return TimeEstimate(float(self.labeler_seconds(costs)), float(self.scratch_seconds(costs)))
