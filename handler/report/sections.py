"""The findings sections beyond the seed: actions, per class, sweep, where the work is, time.

Each function turns one engine figure into its section model (handler/report/model.py),
names instead of indices; `analysis_sections` assembles them.
"""

from __future__ import annotations

from typing import Final, TypedDict

import numpy as np

from handler.boxes import IntArray
from handler.engine import analysis
from handler.engine.evaluation import Thresholds
from handler.engine.outcomes import OUTCOMES, Tally
from handler.engine.state import ClassTable, EvaluationState, NearMissTally
from handler.engine.sweep import Sweep, SweepPoint
from handler.engine.timecost import ACTIONS, ASSUMED, DRAW_SOURCE, TimeCosts, estimate_time, labeler_seconds
from handler.report import policy_sections
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
    Routing,
    SizeRow,
    SuspectedGtErrors,
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


def confusions(classes: ClassTable) -> tuple[Confusion, ...]:
    found = analysis.top_confusions(classes.confusions, TOP_CONFUSIONS)
    columns = (found.gt_class.tolist(), found.pred_class.tolist(), found.count.tolist())
    return tuple(
        Confusion(gt_class=classes.names[g], pred_class=classes.names[p], count=n)
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


def per_class(classes: ClassTable, costs: TimeCosts) -> tuple[ClassRow, ...]:
    counts = classes.counts
    rows = _rows(counts, analysis.most_time_left_first(counts, labeler_seconds(counts, costs)))
    return tuple(ClassRow(class_name=classes.names[row], **figures) for row, figures in rows)


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


def images_with_most_work(state: EvaluationState, costs: TimeCosts) -> tuple[ImageWork, ...]:
    """The images that take the labeler longest with the predictions, by estimated seconds."""
    counts, asset_ids = state.image_counts, state.asset_ids
    seconds = labeler_seconds(counts, costs)
    return tuple(
        ImageWork(
            asset_id=asset_ids[row], labeler_seconds=float(seconds[row]), counts=outcome_counts(counts[row])
        )
        for row in analysis.most_work(seconds, TOP_IMAGES).tolist()
    )


def by_size(sizes: IntArray | None) -> BySize:
    if sizes is None:
        return BySize(available=False, note=NO_SIZES, sizes=())
    rows = _rows(sizes, np.arange(len(analysis.SIZE_NAMES)))
    # model_validate: the engine's size names are plain strings, the model checks them against SizeName.
    sizes_rows = tuple(
        SizeRow.model_validate({"size": analysis.SIZE_NAMES[row], **figures}) for row, figures in rows
    )
    return BySize(available=True, note=None, sizes=sizes_rows)


def near_misses(found: NearMissTally, iou_min: float) -> NearMisses:
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


class AnalysisSections(TypedDict):
    actions: Actions
    confusions: tuple[Confusion, ...]
    per_class: tuple[ClassRow, ...]
    confidence_sweep: ConfidenceSweep
    images_with_most_work: tuple[ImageWork, ...]
    by_size: BySize
    near_misses: NearMisses
    time: TimeSaved
    routing: Routing
    suspected_gt_errors: SuspectedGtErrors


def analysis_sections(state: EvaluationState, thresholds: Thresholds, costs: TimeCosts) -> AnalysisSections:
    return {
        "actions": actions(state.tally),
        "confusions": confusions(state.classes),
        "per_class": per_class(state.classes, costs),
        "confidence_sweep": confidence_sweep(state.sweep),
        "images_with_most_work": images_with_most_work(state, costs),
        "by_size": by_size(state.sizes),
        "near_misses": near_misses(state.near_misses, thresholds.iou_min),
        "time": time_saved(state.tally, costs),
        "routing": policy_sections.routing(state, costs),
        "suspected_gt_errors": policy_sections.suspected_gt_errors(state),
    }
