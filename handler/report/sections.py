"""The findings sections beyond the seed: actions, per class, sweep, where the work is, time.

Each function turns one engine figure into its section model (handler/report/model.py),
names instead of indices; `analysis_sections` assembles them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, TypedDict

import numpy as np

from handler.boxes import FloatArray, IntArray
from handler.datasets import PairedBoxes
from handler.engine import analysis
from handler.engine.evaluation import Evaluation, Thresholds, pair_floor
from handler.engine.outcomes import OUTCOMES, Tally
from handler.engine.sweep import Sweep, SweepPoint
from handler.engine.timecost import ACTIONS, ASSUMED, DRAW_SOURCE, TimeCosts, estimate_time, labeler_seconds
from handler.report.model import (
    TOP_CONFUSIONS,
    TOP_IMAGES,
    ActionCosts,
    Actions,
    BySize,
    ClassRow,
    ConfidenceSweep,
    Confusion,
    Counts,
    ImageWork,
    NearMissBand,
    NearMisses,
    SizeRow,
    SweepPointFigures,
    TimeSaved,
)

NO_SIZES: Final = (
    "Box sizes are not shown: the boxes are in normalised coordinates and the image sizes are not "
    "known, so their areas in pixels are not either."
)


def outcome_counts(row: IntArray) -> Counts:
    """One row of five outcome counts as a counts section (with its total)."""
    return Counts(**dict(zip(OUTCOMES, row.tolist(), strict=True)), total=int(row.sum()))


def actions(tally: Tally) -> Actions:
    return Actions(**dict(zip(ACTIONS, tally.counts.tolist(), strict=True)))


def confusions(evaluation: Evaluation, class_names: Sequence[str]) -> tuple[Confusion, ...]:
    found = analysis.confusions(evaluation, len(class_names), TOP_CONFUSIONS)
    columns = (found.gt_class.tolist(), found.pred_class.tolist(), found.count.tolist())
    return tuple(
        Confusion(gt_class=class_names[g], pred_class=class_names[p], count=n)
        for g, p, n in zip(*columns, strict=True)
    )


class Row(TypedDict):
    counts: Counts
    assistance_score: float


def _rows(counts: IntArray, order: IntArray) -> list[tuple[int, Row]]:
    """Rows of an outcome-count table, in `order`: (row index, its counts and assistance score)."""
    scores = analysis.row_scores(counts)
    return [
        (row, {"counts": outcome_counts(counts[row]), "assistance_score": float(scores[row])})
        for row in order.tolist()
    ]


def per_class(evaluation: Evaluation, class_names: Sequence[str], costs: TimeCosts) -> tuple[ClassRow, ...]:
    counts = analysis.per_class(evaluation, len(class_names))
    rows = _rows(counts, analysis.most_time_left_first(counts, labeler_seconds(counts, costs)))
    return tuple(ClassRow(class_name=class_names[row], **figures) for row, figures in rows)


def _point(point: SweepPoint) -> SweepPointFigures:
    return SweepPointFigures(
        threshold=point.threshold,
        assistance_score=point.tally.assistance_score,
        predictions_kept=point.predictions_kept,
        counts=Counts.of(point.tally),
    )


def confidence_sweep(sweep: Sweep) -> ConfidenceSweep:
    return ConfidenceSweep(
        points=tuple(_point(point) for point in sweep.points),
        used_threshold=sweep.used.threshold,
        used_score=sweep.used.tally.assistance_score,
        best_threshold=sweep.best.threshold,
        best_score=sweep.best.tally.assistance_score,
        recommended=sweep.recommended,
    )


def images_with_most_work(
    evaluation: Evaluation, asset_ids: Sequence[str], costs: TimeCosts
) -> tuple[ImageWork, ...]:
    """The images that take the labeler longest with the predictions, by estimated seconds."""
    counts = analysis.per_image(evaluation, len(asset_ids))
    seconds = labeler_seconds(counts, costs)
    return tuple(
        ImageWork(
            asset_id=asset_ids[row], labeler_seconds=float(seconds[row]), counts=outcome_counts(counts[row])
        )
        for row in analysis.most_work(seconds, TOP_IMAGES).tolist()
    )


def _area_scale(paired: PairedBoxes) -> FloatArray | None:
    """Per image, what turns a box area into pixels²; None when normalised boxes have no image size."""
    if not paired.normalized:
        return np.ones(len(paired.asset_ids))
    scale = paired.widths * paired.heights
    used = np.concatenate((paired.gt.image, paired.pred.image))
    return scale if bool(np.all(np.isfinite(scale[used]))) else None


def by_size(evaluation: Evaluation, paired: PairedBoxes) -> BySize:
    scale = _area_scale(paired)
    if scale is None:
        return BySize(available=False, note=NO_SIZES, sizes=())
    counts = analysis.by_size(evaluation, scale)
    rows = _rows(counts, np.arange(len(analysis.SIZE_NAMES)))
    # model_validate: the engine's size names are plain strings, the model checks them against SizeName.
    sizes = tuple(
        SizeRow.model_validate({"size": analysis.SIZE_NAMES[row], **figures}) for row, figures in rows
    )
    return BySize(available=True, note=None, sizes=sizes)


def near_misses(evaluation: Evaluation, iou_min: float) -> NearMisses:
    found = analysis.near_misses(evaluation, pair_floor(iou_min), iou_min)
    edges = found.edges.tolist()
    bands = tuple(
        NearMissBand(iou_from=low, iou_to=high, count=count)
        for low, high, count in zip(edges[:-1], edges[1:], found.counts.tolist(), strict=True)
    )
    return NearMisses(count=found.count, missed_gt=found.missed_gt, iou_min=iou_min, bands=bands)


def time_saved(tally: Tally, costs: TimeCosts) -> TimeSaved:
    estimate = estimate_time(tally.counts, costs)
    return TimeSaved(
        costs_seconds=ActionCosts(**costs.to_dict()),
        costs_adjusted=costs != TimeCosts(),
        with_predictions_seconds=estimate.with_predictions,
        from_scratch_seconds=estimate.from_scratch,
        saved_seconds=estimate.saved,
        saved_share=estimate.saved_share,
        draw_source=DRAW_SOURCE,
        assumptions=dict(ASSUMED),
    )


@dataclass(frozen=True)
class Analysed:
    """Everything the sections are computed from."""

    evaluation: Evaluation
    sweep: Sweep
    paired: PairedBoxes
    thresholds: Thresholds
    costs: TimeCosts


class AnalysisSections(TypedDict):
    actions: Actions
    confusions: tuple[Confusion, ...]
    per_class: tuple[ClassRow, ...]
    confidence_sweep: ConfidenceSweep
    images_with_most_work: tuple[ImageWork, ...]
    by_size: BySize
    near_misses: NearMisses
    time: TimeSaved


def analysis_sections(a: Analysed) -> AnalysisSections:
    evaluation, names = a.evaluation, a.paired.class_names
    return {
        "actions": actions(evaluation.tally),
        "confusions": confusions(evaluation, names),
        "per_class": per_class(evaluation, names, a.costs),
        "confidence_sweep": confidence_sweep(a.sweep),
        "images_with_most_work": images_with_most_work(evaluation, a.paired.asset_ids, a.costs),
        "by_size": by_size(evaluation, a.paired),
        "near_misses": near_misses(evaluation, a.thresholds.iou_min),
        "time": time_saved(evaluation.tally, a.costs),
    }
