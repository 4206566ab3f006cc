"""What the page draws of single images: every box of a chosen image with its outcome.

A sketch is made from that image's own evaluation (matching never crosses images), so the extra
pass over the few chosen images (execution/image_pass.py) gives exactly what the full run saw there.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Final

import msgspec
import numpy as np

from handler.boxes import FloatArray, IntArray, MaskRuns
from handler.engine.evaluation import Evaluation
from handler.engine.outcomes import Outcome
from handler.engine.outlines import Outlines, outlines

# Boxes drawn per image at most: a crowded image still costs the page little.
MAX_SKETCH_BOXES: Final = 80
Box = tuple[float, float, float, float]
# An object's outline: closed loops, each its points flat (x0, y0, x1, y1, ...).
Outline = tuple[tuple[float, ...], ...]
# An outline's points are rounded to this fraction of the frame's width.
_OUTLINE_PRECISION: Final = 1e-3


class SketchBox(msgspec.Struct, frozen=True):
    side: str  # "gt" or "pred"
    box: Box
    class_name: str
    outcome: str  # Outcome.key
    confidence: float | None = None  # a prediction's; None for a GT box
    angle: float = 0.0  # degrees clockwise about the box's centre
    # The mask's, when the run scored masks; a quadrilateral's corners (`BoxTable.quads`); () for a box.
    outline: Outline = ()


class ImageSketch(msgspec.Struct, frozen=True):
    """Every box of one image (up to MAX_SKETCH_BOXES) on its frame, in the boxes' own units.

    `aspect` is the image's height / width as shown: a normalised frame is 1 by 1 in box units.
    `sized`: the dataset gave the image's size (else the frame is a guess: a square, the boxes' extent).
    """

    asset_id: str
    width: float
    height: float
    aspect: float
    boxes: tuple[SketchBox, ...]
    left_out: int  # boxes beyond MAX_SKETCH_BOXES, not drawn
    normalized: bool = False
    sized: bool = True


def _known(width: float, height: float) -> bool:
    return bool(np.isfinite(width) and np.isfinite(height) and width > 0 and height > 0)


class Sketched(msgspec.Struct, frozen=True):
    """The sketches of the images a run lists (the sketches finisher's data, in asset order)."""

    images: tuple[ImageSketch, ...] = ()


def _frame(boxes: FloatArray, width: float, height: float, normalized: bool) -> tuple[float, float, float]:
    """(width, height, aspect) of the frame: the image's size, or the boxes' extent when it is unknown."""
    known = _known(width, height)
    if normalized:
        return 1.0, 1.0, height / width if known else 1.0
    if not known:
        extent = boxes[:, 2:].max(axis=0) if len(boxes) else np.ones(2)
        width, height = float(max(extent[0], 1.0)), float(max(extent[1], 1.0))
    return width, height, height / width


class ToSketch(msgspec.Struct, frozen=True):
    """An image to sketch: `image` of `evaluation`, its asset id, the run's class names and its
    `size`, (width, height, normalized)."""

    evaluation: Evaluation
    image: int
    asset_id: str
    class_names: Sequence[str]
    size: tuple[float, float, bool]


class _Chosen(msgspec.Struct, frozen=True):
    """What one sketch draws, its outlines aside: its boxes (GT rows, then kept predictions'), up
    to MAX_SKETCH_BOXES of them shown, on its frame (width, height, aspect)."""

    wanted: ToSketch
    on_gt: IntArray
    on_pred: IntArray
    xyxy: FloatArray  # the boxes of `on_gt`, then of `on_pred`
    frame: tuple[float, float, float]
    shown_gt: IntArray  # rows of the evaluation's `gt`
    shown_pred: IntArray  # rows of its `all_pred`: the kept predictions' masks are there (`Evaluation`)

    @property
    def decimals(self) -> int:
        """Decimals of its outlines' points: `_OUTLINE_PRECISION` of the frame's width."""
        return max(0, int(-np.floor(np.log10(self.frame[0] * _OUTLINE_PRECISION))))


def _chosen(wanted: ToSketch) -> _Chosen:
    evaluation, image = wanted.evaluation, wanted.image
    on_gt = np.flatnonzero(evaluation.gt.image == image)
    on_pred = np.flatnonzero(evaluation.pred.image == image)
    xyxy = np.concatenate((evaluation.gt.xyxy[on_gt], evaluation.pred.xyxy[on_pred]))
    shown_gt = on_gt[:MAX_SKETCH_BOXES]
    shown_pred = np.flatnonzero(evaluation.kept)[on_pred[: MAX_SKETCH_BOXES - len(shown_gt)]]
    return _Chosen(wanted, on_gt, on_pred, xyxy, _frame(xyxy, *wanted.size), shown_gt, shown_pred)


Runs = tuple[MaskRuns, MaskRuns]


def _scored_masks(evaluation: Evaluation) -> Runs | None:
    """Both sides' masks (GT, every prediction) where they are scored: a sketch draws their outlines."""
    gt, pred = evaluation.gt.masks, evaluation.all_pred.masks
    return (gt, pred) if isinstance(gt, MaskRuns) and isinstance(pred, MaskRuns) else None


def _quad_outlines(chosen: _Chosen) -> list[Outline]:
    """The quadrilaterals' corners of the drawn boxes, GT rows then prediction rows (none for a box)."""
    evaluation = chosen.wanted.evaluation
    quads = np.round(
        np.concatenate(
            (evaluation.gt.quad_corners[chosen.shown_gt], evaluation.all_pred.quad_corners[chosen.shown_pred])
        ),
        chosen.decimals,
    )
    return [(tuple(quad.ravel().tolist()),) if np.isfinite(quad).all() else () for quad in quads]


class _Batch(msgspec.Struct, frozen=True):
    """The masks of many sketches as one column: each evaluation's shown GT rows, then its shown
    predictions', image by image; `starts[i]` where sketch i's GT and prediction rows begin."""

    masks: MaskRuns
    sketch: IntArray  # (N,) each row's sketch
    starts: list[tuple[int, int]]


def _batch(chosen: Sequence[_Chosen], runs: Sequence[Runs]) -> _Batch:
    """One gather per side of each evaluation (`runs`: each sketch's), however many of its images
    are sketched."""
    by_evaluation: dict[int, list[int]] = {}
    for index, one in enumerate(chosen):
        by_evaluation.setdefault(id(one.wanted.evaluation), []).append(index)
    parts: list[MaskRuns] = []
    owners: list[int] = []
    counts: list[int] = []
    starts = [(0, 0)] * len(chosen)
    row = 0
    for members in by_evaluation.values():
        gt_masks, pred_masks = runs[members[0]]
        gt_rows = [chosen[i].shown_gt for i in members]
        pred_rows = [chosen[i].shown_pred for i in members]
        parts += [gt_masks[np.concatenate(gt_rows)], pred_masks[np.concatenate(pred_rows)]]
        gt_counts, pred_counts = [len(rows) for rows in gt_rows], [len(rows) for rows in pred_rows]
        gt_first = row + np.r_[0, np.cumsum(gt_counts)]
        pred_first = int(gt_first[-1]) + np.r_[0, np.cumsum(pred_counts)]
        starts_of = zip(gt_first[:-1].tolist(), pred_first[:-1].tolist(), strict=True)
        for index, start in zip(members, starts_of, strict=True):
            starts[index] = start
        owners += members * 2
        counts += gt_counts + pred_counts
        row = int(pred_first[-1])
    masks = MaskRuns.concatenate(parts)
    return _Batch(masks, np.repeat(np.array(owners, dtype=np.int64), counts), starts)


def _per_pixel(batch: _Batch, chosen: Sequence[_Chosen]) -> FloatArray:
    """(N, 2) each row's units per pixel: 1 / the largest mask's width and height of its sketch
    where the frame is normalised (a normalised frame is 1 by 1), else 1."""
    largest = np.zeros((len(chosen), 2))
    np.maximum.at(largest, batch.sketch, np.stack((batch.masks.width, batch.masks.height), axis=1))
    normalized = np.array([one.wanted.size[2] for one in chosen], dtype=bool)
    sized = (normalized & (largest[:, 0] > 0))[:, None]
    per_pixel: FloatArray = np.divide(1.0, largest, out=np.ones_like(largest), where=sized)
    return per_pixel[batch.sketch]


def _mask_outlines(chosen: Sequence[_Chosen], runs: Sequence[Runs]) -> list[list[Outline]]:
    """The outlines of every sketch's drawn masks, GT rows then prediction rows, traced at once."""
    batch = _batch(chosen, runs)
    traced = outlines(batch.masks, _per_pixel(batch, chosen))
    rounded = _rounded(traced, np.array([one.decimals for one in chosen])[batch.sketch])
    flat = rounded.ravel().tolist()
    loops = [tuple(flat[a:b]) for a, b in pairwise((2 * traced.loop_first).tolist())]
    objects = [tuple(loops[a:b]) for a, b in pairwise(traced.object_first.tolist())]
    shown = [(len(one.shown_gt), len(one.shown_pred)) for one in chosen]
    return [
        objects[gt : gt + n_gt] + objects[pred : pred + n_pred]
        for (gt, pred), (n_gt, n_pred) in zip(batch.starts, shown, strict=True)
    ]


def _rounded(traced: Outlines, decimals: IntArray) -> FloatArray:
    """The outlines' points each rounded to its object's `decimals` (as `np.round` rounds them:
    all at the first number of decimals, then the points of each other one again)."""
    per_object = traced.loop_first[traced.object_first[1:]] - traced.loop_first[traced.object_first[:-1]]
    of_point = np.repeat(decimals, per_object)
    first, *others = np.unique(of_point).tolist() or [0]
    rounded: FloatArray = np.round(traced.xy, first)
    for places in others:
        at = of_point == places
        rounded[at] = np.round(traced.xy[at], places)
    return rounded


def _outlines(chosen: Sequence[_Chosen]) -> list[list[Outline]]:
    """Each sketch's outlines of its drawn objects, GT rows then prediction rows: the masks' when
    both sides' masks are scored, else the quadrilaterals' (none for a box)."""
    runs = {i: found for i, one in enumerate(chosen) if (found := _scored_masks(one.wanted.evaluation))}
    if not runs:
        return [_quad_outlines(one) for one in chosen]
    masked = list(runs)
    traced = dict(zip(masked, _mask_outlines([chosen[i] for i in masked], list(runs.values())), strict=True))
    return [traced[index] if index in traced else _quad_outlines(one) for index, one in enumerate(chosen)]


def _sketch(chosen: _Chosen, shapes: list[Outline]) -> ImageSketch:
    wanted = chosen.wanted
    evaluation, size = wanted.evaluation, wanted.size
    gt, pred, outcomes = evaluation.gt, evaluation.pred, evaluation.outcomes
    on_gt, on_pred, xyxy = chosen.on_gt, chosen.on_pred, chosen.xyxy
    width, height, aspect = chosen.frame
    sides = np.repeat(["gt", "pred"], [len(on_gt), len(on_pred)])
    classes: IntArray = np.concatenate((gt.class_id[on_gt], pred.class_id[on_pred]))
    codes: IntArray = np.concatenate((outcomes.gt_outcome[on_gt], outcomes.pred_outcome[on_pred]))
    confidences = np.concatenate((np.full(len(on_gt), np.nan), pred.confidence[on_pred]))
    angles = np.concatenate((gt.angle[on_gt], pred.angle[on_pred]))
    keys = [outcome.key for outcome in Outcome]
    drawn = min(len(sides), MAX_SKETCH_BOXES)
    columns = (
        sides[:drawn].tolist(),
        xyxy[:drawn].tolist(),
        classes[:drawn].tolist(),
        codes[:drawn].tolist(),
        confidences[:drawn].tolist(),
        angles[:drawn].tolist(),
        shapes,
    )
    names = wanted.class_names
    boxes = tuple(
        SketchBox(side, (b[0], b[1], b[2], b[3]), names[c], keys[o], None if side == "gt" else p, a, line)
        for side, b, c, o, p, a, line in zip(*columns, strict=True)
    )
    return ImageSketch(
        wanted.asset_id, width, height, aspect, boxes, len(sides) - drawn, size[2], _known(size[0], size[1])
    )


def image_sketches(wanted: Sequence[ToSketch]) -> tuple[ImageSketch, ...]:
    """The sketch of each image `wanted`: their masks' outlines traced together, so many
    sketches cost about what their objects do, not a tracing each."""
    chosen = [_chosen(one) for one in wanted]
    return tuple(_sketch(one, shapes) for one, shapes in zip(chosen, _outlines(chosen), strict=True))
