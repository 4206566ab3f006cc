"""What the page draws of single images: every box of a chosen image with its outcome.

A sketch is made from that image's own evaluation (matching never crosses images), so the extra
pass over the few chosen images (execution/image_pass.py) gives exactly what the full run saw there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from handler.boxes import FloatArray, IntArray
from handler.engine.evaluation import Evaluation
from handler.engine.outcomes import Outcome

# Boxes drawn per image at most: a crowded image still costs the page little.
MAX_SKETCH_BOXES: Final = 80
Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class SketchBox:
    side: str  # "gt" or "pred"
    box: Box
    class_name: str
    outcome: str  # Outcome.key
    confidence: float | None = None  # a prediction's; None for a GT box
    angle: float = 0.0  # degrees clockwise about the box's centre


@dataclass(frozen=True)
class ImageSketch:
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


@dataclass(frozen=True)
class Sketched:
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
    columns = (
        sides[:drawn].tolist(),
        xyxy[:drawn].tolist(),
        classes[:drawn].tolist(),
        codes[:drawn].tolist(),
        confidences[:drawn].tolist(),
        angles[:drawn].tolist(),
    )
    boxes = tuple(
        SketchBox(side, (b[0], b[1], b[2], b[3]), class_names[c], keys[o], None if side == "gt" else p, a)
        for side, b, c, o, p, a in zip(*columns, strict=True)
    )
    return ImageSketch(
        asset_id, width, height, aspect, boxes, len(sides) - drawn, size[2], _known(size[0], size[1])
    )
