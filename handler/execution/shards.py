"""Shards of whole assets, and the one function every executor maps over them.

A run is split either by the driver (both datasets read here, the paired boxes cut into
ranges of images) or, for folders of JSONL shards with the same file names on both sides,
by file: then each worker reads its own pair of shard files, and nothing but the partial
states comes back.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Final

import numpy as np

from handler.boxes import BoxTable, Dataset, FloatArray
from handler.datasets import PairedBoxes, load_dataset, pair_datasets, shard_format
from handler.engine import Thresholds, evaluate
from handler.engine.gt_errors import TOP_SUSPECTS, shard_suspects, suspect_kinds
from handler.engine.health import HealthFigures, by_class, duplicate_pairs
from handler.engine.state import (
    GT_SIDE,
    PRED_SIDE,
    DatasetFigures,
    EvaluationState,
    ShardFacts,
    ShardSweep,
    shard_state,
)
from handler.engine.sweep import class_sweep
from handler.report.outcome_lines import outcome_lines
from handler.storage import open_source

# Below this many boxes a shard is not worth a process of its own.
MIN_BOXES_PER_SHARD: Final = 200_000
SHARD_SUFFIX: Final = ".jsonl"

OutcomeSink = Callable[[int, bytes], None]


@dataclass(frozen=True)
class ShardResult:
    state: EvaluationState
    outcome_lines: bytes


def area_scale(paired: PairedBoxes) -> FloatArray | None:
    """Per image, what turns a box area into pixels²; None when normalised boxes have no image size."""
    if not paired.normalized:
        return np.ones(len(paired.asset_ids))
    scale = paired.widths * paired.heights
    used = np.concatenate((paired.gt.image, paired.pred.image))
    return scale if bool(np.all(np.isfinite(scale[used]))) else None


def dataset_figures(paired: PairedBoxes, gt: Dataset | None, pred: Dataset | None) -> DatasetFigures:
    """The shard's own box counts, plus the datasets' figures where the datasets are given."""
    return DatasetFigures(
        images=len(paired.asset_ids),
        gt_objects=len(paired.gt),
        predictions=len(paired.pred),
        gt_only_images=paired.gt_only_images,
        pred_only_images=paired.pred_only_images,
        crowd_excluded=gt.crowd_excluded if gt else 0,
        gt_skipped=gt.skipped_count if gt else 0,
        pred_skipped=pred.skipped_count if pred else 0,
    )


def health_figures(paired: PairedBoxes, gt: Dataset | None, pred: Dataset | None) -> HealthFigures:
    """The shard's size mismatches, plus the datasets' box and skip counts where the datasets are given."""
    skip_reasons = Counter(gt.skip_reasons if gt else {}) + Counter(pred.skip_reasons if pred else {})
    return HealthFigures(
        gt_boxes=len(gt.boxes) if gt else 0,
        pred_boxes=len(pred.boxes) if pred else 0,
        gt_confident=gt.confidence_count if gt else 0,
        pred_confident=pred.confidence_count if pred else 0,
        size_mismatched=int(paired.size_mismatch.sum()),
        skip_reasons=dict(skip_reasons),
    )


def _box_health(paired: PairedBoxes, kept: BoxTable, facts: ShardFacts) -> HealthFigures:
    """What the shard's boxes add: duplicate GT pairs, and GT and kept predictions by class name."""
    names = list(paired.class_names)
    box_figures = HealthFigures(
        duplicate_gt=duplicate_pairs(paired.gt, len(paired.asset_ids)),
        class_gt=by_class(paired.gt.class_id, names),
        class_kept=by_class(kept.class_id, names),
    )
    return facts.health + box_figures


def evaluate_shard(paired: PairedBoxes, facts: ShardFacts, thresholds: Thresholds) -> ShardResult:
    """Match, score and sweep one shard: its partial state and its outcome lines."""
    evaluation = evaluate(paired.gt, paired.pred, len(paired.asset_ids), thresholds)
    sweep, class_counts = class_sweep(evaluation, thresholds, len(paired.class_names))
    kinds = suspect_kinds(evaluation, thresholds.iou_perfect)
    names = (paired.asset_ids, paired.class_names)
    suspects = shard_suspects(evaluation, kinds, facts.shard, names, TOP_SUSPECTS)
    swept = ShardSweep(sweep, class_counts, suspects)
    kept = replace(facts.figures, predictions_kept=len(evaluation.pred))
    health = _box_health(paired, evaluation.pred, facts)
    state = shard_state(evaluation, swept, replace(facts, figures=kept, health=health), thresholds)
    return ShardResult(state, outcome_lines(evaluation, paired.asset_ids, paired.class_names, kinds))


def _by_image(boxes: BoxTable) -> tuple[BoxTable, np.ndarray]:
    """Boxes ordered by image (stable: the input order within an image, which breaks ties), and
    their image column."""
    ordered = boxes[np.argsort(boxes.image, kind="stable")]
    return ordered, ordered.image


def split_paired(paired: PairedBoxes, shards: int) -> list[PairedBoxes]:
    """Contiguous ranges of images with about the same number of boxes each (one: the boxes as they are)."""
    if shards == 1:
        return [paired]
    n_images = len(paired.asset_ids)
    gt, gt_image = _by_image(paired.gt)
    pred, pred_image = _by_image(paired.pred)
    per_image = np.bincount(gt_image, minlength=n_images) + np.bincount(pred_image, minlength=n_images)
    cumulative = np.cumsum(per_image)
    targets = cumulative[-1] * np.arange(1, shards) / shards if n_images else np.empty(0)
    bounds = np.unique(np.concatenate(([0], np.searchsorted(cumulative, targets, side="right"), [n_images])))
    parts = []
    for start, stop in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        g0, g1 = np.searchsorted(gt_image, [start, stop])
        p0, p1 = np.searchsorted(pred_image, [start, stop])
        parts.append(
            replace(
                paired,
                asset_ids=paired.asset_ids[start:stop],
                gt=gt[g0:g1].with_columns(image=gt.image[g0:g1] - start),
                pred=pred[p0:p1].with_columns(image=pred.image[p0:p1] - start),
                widths=paired.widths[start:stop],
                heights=paired.heights[start:stop],
                tags=None if paired.tags is None else paired.tags[start:stop],
                gt_only_images=0,
                pred_only_images=0,
                size_mismatch=paired.size_mismatch[start:stop],
            )
        )
    return parts or [paired]


@dataclass(frozen=True)
class PairedShard:
    """A range of images of datasets the driver read; `facts` already name its assets and classes."""

    paired: PairedBoxes
    facts: ShardFacts
    thresholds: Thresholds


def run_paired_shard(task: PairedShard) -> ShardResult:
    return evaluate_shard(task.paired, task.facts, task.thresholds)


def paired_shards(
    paired: PairedBoxes, gt: Dataset, pred: Dataset, thresholds: Thresholds, shards: int, skip_limit: int
) -> list[PairedShard]:
    """The driver's split: the datasets' own figures and skips travel with the first shard."""
    ranks = tuple((GT_SIDE, 0, i) for i in range(len(paired.class_names)))
    scale = area_scale(paired)
    tasks: list[PairedShard] = []
    start = 0
    for index, part in enumerate(split_paired(paired, shards)):
        first = index == 0
        shard_gt, shard_pred = (gt, pred) if first else (None, None)
        facts = ShardFacts(
            shard=index,
            asset_ids=tuple(part.asset_ids),
            asset_tags=tuple(part.tags or ()),
            class_names=tuple(paired.class_names),
            class_ranks=ranks,
            area_scale=None if scale is None else scale[start : start + len(part.asset_ids)],
            figures=dataset_figures(
                replace(part, gt_only_images=paired.gt_only_images, pred_only_images=paired.pred_only_images)
                if first
                else part,
                shard_gt,
                shard_pred,
            ),
            skipped=(tuple(gt.skipped), tuple(pred.skipped)) if first else ((), ()),
            skip_limit=skip_limit,
            health=health_figures(part, shard_gt, shard_pred),
        )
        tasks.append(PairedShard(part, facts, thresholds))
        start += len(part.asset_ids)
    return tasks


@dataclass(frozen=True)
class FileShard:
    """A pair of shard files (same name on both sides) that the worker reads itself."""

    shard: int
    gt_reference: str
    pred_reference: str
    thresholds: Thresholds
    skip_limit: int


def _ranks(paired: PairedBoxes, gt: Dataset, pred: Dataset, shard: int) -> tuple[tuple[int, int, int], ...]:
    gt_index = {name: i for i, name in enumerate(gt.class_names)}
    pred_index = {name: i for i, name in enumerate(pred.class_names)}
    return tuple(
        (GT_SIDE, shard, gt_index[name]) if name in gt_index else (PRED_SIDE, shard, pred_index[name])
        for name in paired.class_names
    )


def run_file_shard(task: FileShard) -> ShardResult:
    gt = load_dataset(open_source(task.gt_reference), shard_format().name)
    pred = load_dataset(open_source(task.pred_reference), shard_format().name, gt)
    paired = pair_datasets(gt.dataset, pred.dataset)
    facts = ShardFacts(
        shard=task.shard,
        asset_ids=tuple(paired.asset_ids),
        asset_tags=tuple(paired.tags or ()),
        class_names=tuple(paired.class_names),
        class_ranks=_ranks(paired, gt.dataset, pred.dataset, task.shard),
        area_scale=area_scale(paired),
        figures=dataset_figures(paired, gt.dataset, pred.dataset),
        skipped=(tuple(gt.dataset.skipped), tuple(pred.dataset.skipped)),
        skip_limit=task.skip_limit,
        health=health_figures(paired, gt.dataset, pred.dataset),
    )
    return evaluate_shard(paired, facts, task.thresholds)
