"""The Python API, in the style of mmeval's BaseMetric: `add` per batch, `compute`, `reset`.

>>> metric = PrelabelingEfficiency(iou_min=0.3, iou_perfect=0.8, confidence_threshold=0.5)
>>> metric.add(predictions=[{"bboxes": [[0, 0, 10, 10]], "labels": ["cat"], "scores": [0.9]}],
...            groundtruths=[{"bboxes": [[0, 0, 10, 10]], "labels": ["cat"]}])
>>> metric.compute().efficiency_level
'Production-grade'

State is a `Tally` of additive figures, so metrics that saw disjoint images merge exactly:
`PrelabelingEfficiency.merge(a, b)` equals one metric that saw both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
from pydantic import BaseModel, ConfigDict

from handler.boxes import BoxTable
from handler.engine import Tally, Thresholds, evaluate
from handler.engine.timecost import TimeCosts
from handler.inputs import DEFAULT_THRESHOLDS
from handler.report.model import Counts, Grade, Score, Shares, TimeSaved
from handler.report.sections import time_saved

ImageRecord = Mapping[str, Any]


class EfficiencyResult(BaseModel):
    """What `compute` returns: the score, the grade, the figures behind them and labeler time.

    The figures are the findings' own section models, so `to_dict` matches the report's keys.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    assistance_score: Score
    efficiency_level: Grade
    counts: Counts
    shares: Shares
    mean_iou: Score | None
    time: TimeSaved

    @classmethod
    def of(cls, tally: Tally, costs: TimeCosts) -> EfficiencyResult:
        return cls(
            assistance_score=tally.assistance_score,
            efficiency_level=cast(Grade, tally.grade),  # one of GRADES; the model checks it again
            counts=Counts.of(tally),
            shares=Shares.of(tally),
            mean_iou=tally.mean_iou,
            time=time_saved(tally, costs),
        )

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def __str__(self) -> str:
        outcomes = ", ".join(f"{name} {count}" for name, count in self.counts.outcomes().items())
        return f"{self.efficiency_level} (assistance score {self.assistance_score:.3f}): {outcomes}"


def _tables(
    predictions: Sequence[ImageRecord], groundtruths: Sequence[ImageRecord]
) -> tuple[BoxTable, BoxTable]:
    """Per-image records → two box tables with image = position and one shared class space."""
    if len(predictions) != len(groundtruths):
        raise ValueError(
            f"Expected as many prediction records as groundtruth records but got "
            f"{len(predictions)} and {len(groundtruths)}"
        )
    records = [*groundtruths, *predictions]
    xyxy = [np.asarray(r["bboxes"], dtype=np.float64).reshape(-1, 4) for r in records]
    sizes = [len(b) for b in xyxy]
    labels = np.concatenate([np.asarray(r["labels"]).reshape(-1) for r in records] or [np.empty(0)])
    _, class_id = np.unique(labels, return_inverse=True)
    image = np.concatenate([np.full(n, i % len(groundtruths)) for i, n in enumerate(sizes)] or [np.empty(0)])
    n_gt = sum(sizes[: len(groundtruths)])
    scores = [
        np.asarray(r.get("scores", np.ones(n)), dtype=np.float64)
        for r, n in zip(predictions, sizes[len(groundtruths) :], strict=True)
    ]
    boxes = BoxTable.build(np.concatenate(xyxy or [np.empty((0, 4))]), class_id, image)
    gt = boxes[:n_gt]
    pred = boxes[n_gt:].with_columns(
        confidence=np.concatenate(scores or [np.empty(0)]),
        source_index=np.arange(len(boxes) - n_gt),
    )
    return gt, pred


class PrelabelingEfficiency:
    """How much labeling work predictions save, accumulated over batches of images.

    The threshold defaults are node.json's (`DEFAULT_THRESHOLDS`).

    Args:
        iou_min: Minimal IoU for a prediction to match a GT box.
        iou_perfect: IoU from which a same-class match needs no correction.
        confidence_threshold: predictions below it are dropped (equal is kept).
        time_costs: seconds per labeler action for `compute().time` (default: `TimeCosts()`,
            drawing 25.5 s after Su et al. 2012, the other actions assumed).

    `add(predictions, groundtruths)` takes one record per image, in mmdetection's style:
    predictions `{"bboxes": (N, 4) xyxy, "labels": (N,), "scores": (N,)}` (scores optional:
    fully confident), groundtruths `{"bboxes": (M, 4), "labels": (M,)}`. Labels may be
    class names or ids; GT and predictions are compared by equal label.
    """

    def __init__(
        self,
        iou_min: float = DEFAULT_THRESHOLDS.iou_min,
        iou_perfect: float = DEFAULT_THRESHOLDS.iou_perfect,
        confidence_threshold: float = DEFAULT_THRESHOLDS.confidence_threshold,
        time_costs: TimeCosts | None = None,
    ) -> None:
        self.thresholds = Thresholds(iou_min, iou_perfect, confidence_threshold)
        self.time_costs = time_costs or TimeCosts()
        self._state = Tally.zero()

    @property
    def state(self) -> Tally:
        return self._state

    def add(self, predictions: Sequence[ImageRecord], groundtruths: Sequence[ImageRecord]) -> None:
        self._state = self._state + self._evaluate(predictions, groundtruths)

    def _evaluate(self, predictions: Sequence[ImageRecord], groundtruths: Sequence[ImageRecord]) -> Tally:
        gt, pred = _tables(predictions, groundtruths)
        return evaluate(gt, pred, len(groundtruths), self.thresholds).tally

    def compute(self) -> EfficiencyResult:
        return EfficiencyResult.of(self._state, self.time_costs)

    def reset(self) -> None:
        self._state = Tally.zero()

    def __call__(
        self, *, predictions: Sequence[ImageRecord], groundtruths: Sequence[ImageRecord]
    ) -> EfficiencyResult:
        """Stateless: evaluate these images alone; the accumulated state is left alone."""
        return EfficiencyResult.of(self._evaluate(predictions, groundtruths), self.time_costs)

    def merge(self, other: PrelabelingEfficiency) -> PrelabelingEfficiency:
        """A new metric whose state is both states (the two must have seen disjoint images).

        Time costs do not change the state; the merged metric keeps this one's.
        """
        if not isinstance(other, PrelabelingEfficiency):
            raise TypeError(f"Expected a PrelabelingEfficiency but got {type(other).__name__}")
        if other.thresholds != self.thresholds:
            raise ValueError(
                f"Expected metrics with equal thresholds but got {self.thresholds} and {other.thresholds}"
            )
        merged = PrelabelingEfficiency(**vars(self.thresholds), time_costs=self.time_costs)
        merged._state = self._state + other._state
        return merged
