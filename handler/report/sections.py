"""The findings sections beyond the seed: actions, per class, sweep, where the work is, time.

Each function turns one engine figure into plain JSON data (names instead of indices);
`analysis_sections` assembles them. The page and `findings.schema.json` read these keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from handler.boxes import FloatArray, IntArray
from handler.datasets import PairedBoxes
from handler.engine import analysis
from handler.engine.evaluation import Evaluation, Thresholds, pair_floor
from handler.engine.outcomes import OUTCOMES, Tally
from handler.engine.sweep import Sweep, SweepPoint
from handler.engine.timecost import ACTIONS, ASSUMED, DRAW_SOURCE, TimeCosts, estimate_time, labeler_seconds

TOP_CONFUSIONS: Final = 10
TOP_IMAGES: Final = 10
NO_SIZES: Final = (
    "Box sizes are not shown: the boxes are in normalised coordinates and the image sizes are not "
    "known, so their areas in pixels are not either."
)


def outcome_dict(row: IntArray) -> dict[str, int]:
    """One row of five outcome counts as the findings' counts object (with its total)."""
    counts = {name: int(value) for name, value in zip(OUTCOMES, row.tolist(), strict=True)}
    counts["total"] = int(row.sum())
    return counts


def actions(tally: Tally) -> dict[str, int]:
    return {action: int(count) for action, count in zip(ACTIONS, tally.counts.tolist(), strict=True)}


def confusions(evaluation: Evaluation, class_names: Sequence[str]) -> list[dict[str, Any]]:
    found = analysis.confusions(evaluation, len(class_names), TOP_CONFUSIONS)
    columns = (found.gt_class.tolist(), found.pred_class.tolist(), found.count.tolist())
    return [
        {"gt_class": class_names[g], "pred_class": class_names[p], "count": n}
        for g, p, n in zip(*columns, strict=True)
    ]


def _rows(counts: IntArray, names: Sequence[str], order: IntArray, key: str) -> list[dict[str, Any]]:
    """Rows of an outcome-count table as objects `{key: name, counts, assistance_score}`."""
    scores = analysis.row_scores(counts)
    return [
        {key: names[row], "counts": outcome_dict(counts[row]), "assistance_score": float(scores[row])}
        for row in order.tolist()
    ]


def per_class(evaluation: Evaluation, class_names: Sequence[str]) -> list[dict[str, Any]]:
    counts = analysis.per_class(evaluation, len(class_names))
    return _rows(counts, class_names, analysis.worst_first(counts), "class")


def _point(point: SweepPoint) -> dict[str, Any]:
    return {
        "threshold": point.threshold,
        "assistance_score": point.tally.assistance_score,
        "predictions_kept": point.predictions_kept,
        "counts": point.tally.count_dict(),
    }


def confidence_sweep(sweep: Sweep) -> dict[str, Any]:
    return {
        "points": [_point(point) for point in sweep.points],
        "used_threshold": sweep.used.threshold,
        "used_score": sweep.used.tally.assistance_score,
        "best_threshold": sweep.best.threshold,
        "best_score": sweep.best.tally.assistance_score,
        "recommended": sweep.recommended,
    }


def images_with_most_work(
    evaluation: Evaluation, asset_ids: Sequence[str], costs: TimeCosts
) -> list[dict[str, Any]]:
    """The images that take the labeler longest with the predictions, by estimated seconds."""
    counts = analysis.per_image(evaluation, len(asset_ids))
    seconds = labeler_seconds(counts, costs)
    return [
        {
            "asset_id": asset_ids[row],
            "labeler_seconds": float(seconds[row]),
            "counts": outcome_dict(counts[row]),
        }
        for row in analysis.most_work(seconds, TOP_IMAGES).tolist()
    ]


def _area_scale(paired: PairedBoxes) -> FloatArray | None:
    """Per image, what turns a box area into pixels²; None when normalised boxes have no image size."""
    if not paired.normalized:
        return np.ones(len(paired.asset_ids))
    scale = paired.widths * paired.heights
    used = np.concatenate((paired.gt.image, paired.pred.image))
    return scale if bool(np.all(np.isfinite(scale[used]))) else None


def by_size(evaluation: Evaluation, paired: PairedBoxes) -> dict[str, Any]:
    scale = _area_scale(paired)
    if scale is None:
        return {"available": False, "note": NO_SIZES, "sizes": []}
    counts = analysis.by_size(evaluation, scale)
    order = np.arange(len(analysis.SIZE_NAMES))
    return {"available": True, "note": None, "sizes": _rows(counts, analysis.SIZE_NAMES, order, "size")}


def near_misses(evaluation: Evaluation, iou_min: float) -> dict[str, Any]:
    found = analysis.near_misses(evaluation, pair_floor(iou_min), iou_min)
    edges = found.edges.tolist()
    bands = [
        {"iou_from": low, "iou_to": high, "count": count}
        for low, high, count in zip(edges[:-1], edges[1:], found.counts.tolist(), strict=True)
    ]
    return {"count": found.count, "missed_gt": found.missed_gt, "iou_min": iou_min, "bands": bands}


def time_saved(tally: Tally, costs: TimeCosts) -> dict[str, Any]:
    estimate = estimate_time(tally.counts, costs)
    return {
        "costs_seconds": costs.to_dict(),
        "costs_adjusted": costs != TimeCosts(),
        "with_predictions_seconds": estimate.with_predictions,
        "from_scratch_seconds": estimate.from_scratch,
        "saved_seconds": estimate.saved,
        "saved_share": estimate.saved_share,
        "draw_source": DRAW_SOURCE,
        "assumptions": dict(ASSUMED),
    }


@dataclass(frozen=True)
class Analysed:
    """Everything the sections are computed from."""

    evaluation: Evaluation
    sweep: Sweep
    paired: PairedBoxes
    thresholds: Thresholds
    costs: TimeCosts


def analysis_sections(a: Analysed) -> dict[str, Any]:
    evaluation, names = a.evaluation, a.paired.class_names
    return {
        "actions": actions(evaluation.tally),
        "confusions": confusions(evaluation, names),
        "per_class": per_class(evaluation, names),
        "confidence_sweep": confidence_sweep(a.sweep),
        "images_with_most_work": images_with_most_work(evaluation, a.paired.asset_ids, a.costs),
        "by_size": by_size(evaluation, a.paired),
        "near_misses": near_misses(evaluation, a.thresholds.iou_min),
        "time": time_saved(evaluation.tally, a.costs),
    }
