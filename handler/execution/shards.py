"""Shards of whole assets, and the one function every executor maps over them.

A run is split either by the driver (both datasets read here, the paired boxes cut into
ranges of images) or, for folders of JSONL shards with the same file names on both sides,
by file: then each worker reads its own pair of shard files, and nothing but the partial
states comes back.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec
import numpy as np
from msgspec.structs import replace

from handler.boxes import BoxTable, Dataset, FloatArray, IntArray, SkippedBox
from handler.datasets import PairedBoxes, load_dataset, pair_datasets, shard_format
from handler.engine import Thresholds, evaluate
from handler.engine.analyses.box_counts import BOX_COUNTS, DatasetCounts
from handler.engine.analyses.data_health import DATA_HEALTH
from handler.engine.gt_errors import suspect_kinds
from handler.engine.health import HealthFigures
from handler.engine.ledger import ledger_chunk
from handler.engine.npz_chunks import StreamedChunk
from handler.engine.plugin import GT_SIDE, PRED_SIDE, Analysis, ClassRank, ShardContext
from handler.engine.pre_label_boxes import ChunkImages, candidate_chunk
from handler.engine.state import EvaluationState, ListedSkip, ReadFigures, Skips
from handler.engine.sweep import sweep_thresholds
from handler.errors import quoted
from handler.storage import open_source

SHARD_SUFFIX: Final = ".jsonl"

Analyses = tuple[Analysis[Any], ...]


class ShardResult(msgspec.Struct, frozen=True):
    state: EvaluationState
    ledger: bytes  # the shard's ledger chunk (`engine.ledger`)
    pre_labels: StreamedChunk  # the pre-label candidates' chunk (`pre_label_boxes`), made as it is written


def area_scale(paired: PairedBoxes) -> FloatArray | None:
    """Per image, what turns a box area into pixels²; None when normalised boxes have no image size."""
    if not paired.normalized:
        return np.ones(len(paired.asset_ids))
    scale = paired.widths * paired.heights
    used = np.concatenate((paired.gt.image, paired.pred.image))
    return scale if bool(np.all(np.isfinite(scale[used]))) else None


def read_figures(paired: PairedBoxes, gt: Dataset, pred: Dataset, shard: int, skip_limit: int) -> ReadFigures:
    """What reading the two datasets found: unpaired images, crowd, skipped and confident boxes (a
    crowded image's boxes among the skipped ones, not among those read)."""
    crowded_gt = sum(image.gt_boxes for image in paired.crowded)
    crowded_pred = sum(image.pred_boxes for image in paired.crowded)
    figures = DatasetCounts(
        gt_only_images=paired.gt_only_images,
        pred_only_images=paired.pred_only_images,
        crowd_excluded=gt.crowd_excluded,
        gt_skipped=gt.skipped_count + crowded_gt,
        pred_skipped=pred.skipped_count + crowded_pred,
    )
    health = HealthFigures(
        gt_boxes=len(gt.boxes) - crowded_gt,
        pred_boxes=len(pred.boxes) - crowded_pred,
        gt_confident=gt.confidence_count,
        pred_confident=pred.confidence_count,
        gt_turned=int(np.count_nonzero(gt.boxes.turned)),
        pred_turned=int(np.count_nonzero(pred.boxes.turned)),
        gt_skip_reasons=_with_crowded(gt.skip_reasons, paired, "gt_boxes"),
        pred_skip_reasons=_with_crowded(pred.skip_reasons, paired, "pred_boxes"),
        gt_layout=(gt.layout_note,) if gt.layout_note else (),
        pred_layout=(pred.layout_note,) if pred.layout_note else (),
    )
    listed = ((GT_SIDE, gt.skipped + _crowded_skips(paired, gt)), (PRED_SIDE, pred.skipped))
    skipped = tuple(
        ListedSkip(side, shard, position, skip)
        for side, found in listed
        for position, skip in enumerate(found)
    )
    return ReadFigures({BOX_COUNTS.name: figures, DATA_HEALTH.name: health}, Skips(skipped, skip_limit))


def _with_crowded(reasons: dict[str, int], paired: PairedBoxes, side: str) -> dict[str, int]:
    """A side's skip reasons with its boxes on the crowded images, by the bound each broke."""
    counted = dict(reasons)
    for image in paired.crowded:
        boxes = getattr(image, side)
        if boxes:
            counted[image.reason] = counted.get(image.reason, 0) + boxes
    return counted


def _crowded_skips(paired: PairedBoxes, gt: Dataset) -> list[SkippedBox]:
    """A crowded image listed once, with its boxes on both sides (listed with the ground truth's)."""
    return [
        SkippedBox(
            gt.source,
            f"image {quoted(image.asset_id)}",
            f"{image.gt_boxes:,} ground-truth boxes and {image.pred_boxes:,} predictions {image.reason}: "
            "skipped",
        )
        for image in paired.crowded
    ]


def evaluate_shard(paired: PairedBoxes, context: ShardContext, analyses: Analyses) -> ShardResult:
    """Match and score one shard, run every analysis on it: its partial state, its ledger chunk and
    its pre-label candidates."""
    evaluation = evaluate(paired.gt, paired.pred, len(paired.asset_ids), context.thresholds)
    partials = {analysis: analysis.shard(evaluation, context) for analysis in analyses}
    kinds = suspect_kinds(evaluation, context.thresholds.iou_perfect)
    images = ChunkImages(
        paired.asset_ids, paired.class_names, paired.widths, paired.heights, paired.normalized, paired.own_ids
    )
    return ShardResult(
        EvaluationState(evaluation.tally, partials),
        ledger_chunk(evaluation, images, kinds),
        pre_label_chunk(paired.pred, images, context),
    )


def pre_label_chunk(pred: BoxTable, images: ChunkImages, context: ShardContext) -> StreamedChunk:
    """The shard's predictions that any threshold of the sweep (routing picks among them) keeps."""
    return candidate_chunk(pred, images, sweep_thresholds(context.thresholds.confidence_threshold)[0])


def _by_image(boxes: BoxTable) -> tuple[BoxTable, IntArray]:
    """Boxes ordered by image (stable: the input order within an image, which breaks ties), and
    their image column; the boxes themselves, not a copy, when they already are (a file written
    image by image)."""
    if bool(np.all(boxes.image[1:] >= boxes.image[:-1])):
        return boxes, boxes.image
    ordered = boxes[np.argsort(boxes.image, kind="stable")]
    return ordered, ordered.image


def _renumbered(boxes: BoxTable, first_image: int) -> BoxTable:
    """A range of boxes with images numbered from the range's first image."""
    return boxes.with_columns(image=boxes.image - first_image) if first_image else boxes


def renumbered(paired: PairedBoxes, first_image: int) -> PairedBoxes:
    """A range of images cut by `split_paired` with its boxes' images numbered from 0."""
    if not first_image:
        return paired
    return replace(paired, gt=_renumbered(paired.gt, first_image), pred=_renumbered(paired.pred, first_image))


def split_paired(paired: PairedBoxes, shards: int) -> list[tuple[int, PairedBoxes]]:
    """Contiguous ranges of images with about the same number of boxes each (one: the boxes as they
    are), each with its first image. A range's boxes are views of the whole run's, their images
    still numbered as in the whole run: renumbering them here would hold a new image column per
    shard, the size of the predictions' together, through the whole match (`renumbered` does it
    where the shard is evaluated)."""
    if shards == 1:
        return [(0, paired)]
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
        part = replace(
            paired,
            asset_ids=paired.asset_ids[start:stop],
            gt=gt[g0:g1],
            pred=pred[p0:p1],
            widths=paired.widths[start:stop],
            heights=paired.heights[start:stop],
            tags=None if paired.tags is None else paired.tags[start:stop],
            own_ids=None
            if paired.own_ids is None
            else replace(paired.own_ids, image_ids=paired.own_ids.image_ids[start:stop]),
            gt_only_images=0,
            pred_only_images=0,
            size_mismatch=paired.size_mismatch[start:stop],
        )
        parts.append((start, part))
    return parts or [(0, paired)]


def shard_context(
    paired: PairedBoxes,
    shard: int,
    ranks: tuple[ClassRank, ...],
    scale: FloatArray | None,
    thresholds: Thresholds,
) -> ShardContext:
    return ShardContext(
        shard=shard,
        asset_ids=tuple(paired.asset_ids),
        asset_tags=tuple(paired.tags or ()),
        class_names=tuple(paired.class_names),
        class_ranks=ranks,
        area_scale=scale,
        size_mismatch=paired.size_mismatch,
        thresholds=thresholds,
    )


class PairedShard(msgspec.Struct, frozen=True):
    """A range of images of datasets the driver read, from `first_image` of the run (its boxes'
    images numbered as in the run: `boxes` numbers them from 0); `context` already names its
    assets and classes."""

    paired: PairedBoxes
    context: ShardContext
    analyses: Analyses
    first_image: int = 0

    def boxes(self) -> PairedBoxes:
        return renumbered(self.paired, self.first_image)


def run_paired_shard(task: PairedShard) -> ShardResult:
    return evaluate_shard(task.boxes(), task.context, task.analyses)


def paired_shards(
    paired: PairedBoxes, thresholds: Thresholds, shards: int, analyses: Analyses
) -> list[PairedShard]:
    """The driver's split into ranges of images (what reading found stays with the driver)."""
    ranks = tuple((GT_SIDE, 0, i) for i in range(len(paired.class_names)))
    scale = area_scale(paired)
    tasks: list[PairedShard] = []
    for index, (start, part) in enumerate(split_paired(paired, shards)):
        part_scale = None if scale is None else scale[start : start + len(part.asset_ids)]
        context = shard_context(part, index, ranks, part_scale, thresholds)
        tasks.append(PairedShard(part, context, analyses, start))
    return tasks


class FileShard(msgspec.Struct, frozen=True):
    """A pair of shard files (same name on both sides) that the worker reads itself."""

    shard: int
    gt_reference: str
    pred_reference: str
    thresholds: Thresholds
    skip_limit: int
    analyses: Analyses


def _ranks(paired: PairedBoxes, gt: Dataset, pred: Dataset, shard: int) -> tuple[ClassRank, ...]:
    gt_index = {name: i for i, name in enumerate(gt.class_names)}
    pred_index = {name: i for i, name in enumerate(pred.class_names)}
    return tuple(
        (GT_SIDE, shard, gt_index[name]) if name in gt_index else (PRED_SIDE, shard, pred_index[name])
        for name in paired.class_names
    )


def read_file_shard(task: FileShard) -> tuple[PairedBoxes, Dataset, Dataset]:
    """A pair of shard files read and paired: the paired boxes, and both datasets."""
    gt_loaded = load_dataset(open_source(task.gt_reference), shard_format().name)
    gt, pred = (
        gt_loaded.dataset,
        load_dataset(open_source(task.pred_reference), shard_format().name, gt_loaded).dataset,
    )
    return pair_datasets(gt, pred), gt, pred


def shard_boxes(task: PairedShard | FileShard) -> tuple[PairedBoxes, Thresholds]:
    """A shard's paired boxes (read again for a shard file) and its thresholds."""
    if isinstance(task, PairedShard):
        return task.boxes(), task.context.thresholds
    return read_file_shard(task)[0], task.thresholds


def run_file_shard(task: FileShard) -> ShardResult:
    """Read, pair and evaluate a pair of shard files; what reading them found is in the state."""
    paired, gt, pred = read_file_shard(task)
    ranks = _ranks(paired, gt, pred, task.shard)
    context = shard_context(paired, task.shard, ranks, area_scale(paired), task.thresholds)
    result = evaluate_shard(paired, context, task.analyses)
    read = read_figures(paired, gt, pred, task.shard, task.skip_limit)
    return replace(result, state=result.state.adding(read))
