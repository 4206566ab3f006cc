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

from handler.boxes import BoxTable, FloatArray, IntArray, MaskRuns
from handler.engine.evaluation import Evaluation
from handler.engine.outcomes import Outcome
from handler.engine.outlines import outlines

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


def _outlines(
    gt: BoxTable, pred: BoxTable, rows: tuple[IntArray, IntArray], frame: tuple[float, float, bool]
) -> list[Outline]:
    """The outlines of the drawn objects, GT rows then prediction rows: the masks' when both sides'
    masks are scored (runs), else the quadrilaterals' (none for a box). `frame` is the sketch's
    (width, height, normalized)."""
    width, _, normalized = frame
    decimals = max(0, int(-np.floor(np.log10(width * _OUTLINE_PRECISION))))
    if not isinstance(gt.masks, MaskRuns) or not isinstance(pred.masks, MaskRuns):
        quads = np.round(np.concatenate((gt.quad_corners[rows[0]], pred.quad_corners[rows[1]])), decimals)
        return [(tuple(quad.ravel().tolist()),) if np.isfinite(quad).all() else () for quad in quads]
    masks = MaskRuns.concatenate([gt.masks[rows[0]], pred.masks[rows[1]]])
    sized = normalized and len(masks) > 0 and int(masks.width.max()) > 0
    per_pixel = (1 / float(masks.width.max()), 1 / float(masks.height.max())) if sized else (1.0, 1.0)
    traced = outlines(masks, per_pixel)
    rounded = np.round(traced.xy, decimals)
    per_loop = np.split(rounded, traced.loop_first[1:-1]) if len(traced.loop_first) > 1 else []
    loops = [tuple(loop.ravel().tolist()) for loop in per_loop]
    first = traced.object_first.tolist()
    return [tuple(loops[a:b]) for a, b in pairwise(first)]


def image_sketch(
    evaluation: Evaluation,
    image: int,
    asset_id: str,
    class_names: Sequence[str],
    size: tuple[float, float, bool],
) -> ImageSketch:
    """The sketch of `image` of an evaluation: `size` is its (width, height, normalized)."""
    gt, pred, outcomes = evaluation.gt, evaluation.pred, evaluation.outcomes
    on_gt, on_pred = np.flatnonzero(gt.image == image), np.flatnonzero(pred.image == image)
    xyxy = np.concatenate((gt.xyxy[on_gt], pred.xyxy[on_pred]))
    width, height, aspect = _frame(xyxy, *size)
    sides = np.repeat(["gt", "pred"], [len(on_gt), len(on_pred)])
    classes: IntArray = np.concatenate((gt.class_id[on_gt], pred.class_id[on_pred]))
    codes: IntArray = np.concatenate((outcomes.gt_outcome[on_gt], outcomes.pred_outcome[on_pred]))
    confidences = np.concatenate((np.full(len(on_gt), np.nan), pred.confidence[on_pred]))
    angles = np.concatenate((gt.angle[on_gt], pred.angle[on_pred]))
    keys = [outcome.key for outcome in Outcome]
    drawn = min(len(sides), MAX_SKETCH_BOXES)
    shown_gt = on_gt[:drawn]
    # the kept predictions' masks are `all_pred`'s (`Evaluation`)
    shown_pred = np.flatnonzero(evaluation.kept)[on_pred[: drawn - len(shown_gt)]]
    shapes = _outlines(gt, evaluation.all_pred, (shown_gt, shown_pred), (width, height, size[2]))
    columns = (
        sides[:drawn].tolist(),
        xyxy[:drawn].tolist(),
        classes[:drawn].tolist(),
        codes[:drawn].tolist(),
        confidences[:drawn].tolist(),
        angles[:drawn].tolist(),
        shapes,
    )
    boxes = tuple(
        SketchBox(
            side, (b[0], b[1], b[2], b[3]), class_names[c], keys[o], None if side == "gt" else p, a, line
        )
        for side, b, c, o, p, a, line in zip(*columns, strict=True)
    )
    return ImageSketch(
        asset_id, width, height, aspect, boxes, len(sides) - drawn, size[2], _known(size[0], size[1])
    )
