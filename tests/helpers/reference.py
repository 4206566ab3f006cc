"""A deliberately naive reference of contract §5-7, for checking the vectorised engine.

Pure Python, no numpy, one image at a time, one pair at a time: it is meant to be read
against the spec line by line, not to be fast.

- A prediction is dropped when its confidence < threshold (equal is kept).
- IoU is computed with exactly the float operations of `handler/engine/iou.py` (in the
  same order, GT box first), so the two agree bit for bit. A pair with a rotated box (an
  `angle`, degrees clockwise about its centre) takes its IoU from shapely's polygons instead:
  an independent reference, equal to the engine's within rounding.
- Greedy matching is done literally: take the remaining candidate pair with the highest
  IoU (ties: lower prediction index, then lower GT index), match it, remove its
  prediction and GT box, repeat.
- Score and grade are exact `Fraction`s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

Box = tuple[float, float, float, float]

CORRECT = "correct"
SHIFTED = "shifted"
CLASS_CONFUSED = "class_confused"
FALSE_POSITIVE = "false_positive"
FALSE_NEGATIVE = "false_negative"
OUTCOME_NAMES = (CORRECT, SHIFTED, CLASS_CONFUSED, FALSE_POSITIVE, FALSE_NEGATIVE)

# Grade bounds, best first (contract §7): the best grade whose bound the score reaches.
GRADE_BOUNDS = (
    ("Production-grade", Fraction(9, 10)),
    ("Strong assist", Fraction(6, 10)),
    ("Partial assist", Fraction(3, 10)),
    ("Minimal assist", Fraction(0)),
)


@dataclass(frozen=True)
class GtBox:
    xyxy: Box
    class_id: int
    angle: float = 0.0


@dataclass(frozen=True)
class PredBox:
    xyxy: Box
    class_id: int
    confidence: float = 1.0
    angle: float = 0.0


@dataclass(frozen=True)
class RefImage:
    gt: tuple[GtBox, ...] = ()
    preds: tuple[PredBox, ...] = ()


@dataclass(frozen=True)
class Match:
    pred: int  # index into the image's `preds` (before the confidence filter)
    gt: int  # index into the image's `gt`
    iou: float


@dataclass(frozen=True)
class ImageResult:
    matches: tuple[Match, ...]  # in the order greedy accepted them
    gt_outcomes: tuple[str, ...]  # one per GT box
    pred_outcomes: tuple[str | None, ...]  # one per prediction; None when dropped


@dataclass(frozen=True)
class Evaluation:
    images: tuple[ImageResult, ...]
    counts: dict[str, int]  # the five outcomes (a matched pair counts once) and "total"
    same_class_ious: tuple[float, ...]  # IoU of every correct or shifted pair
    mean_iou: float | None
    score: Fraction
    grade: str


def iou(gt: Box, pred: Box) -> float:
    """Same float operations, in the same order, as `paired_iou(gt, pred)`."""
    width = min(gt[2], pred[2]) - max(gt[0], pred[0])
    height = min(gt[3], pred[3]) - max(gt[1], pred[1])
    intersection = max(width, 0.0) * max(height, 0.0)
    area_gt = (gt[2] - gt[0]) * (gt[3] - gt[1])
    area_pred = (pred[2] - pred[0]) * (pred[3] - pred[1])
    union = area_gt + area_pred - intersection
    if union > 0:
        return intersection / union
    return 0.0


def polygon(xyxy: Box, angle: float) -> list[tuple[float, float]]:
    """The box's corners turned `angle` degrees clockwise on the image (y down) about its centre."""
    cx, cy = (xyxy[0] + xyxy[2]) / 2, (xyxy[1] + xyxy[3]) / 2
    cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    return [
        (cx + dx * cos - dy * sin, cy + dx * sin + dy * cos)
        for dx, dy in (
            (xyxy[0] - cx, xyxy[1] - cy),
            (xyxy[2] - cx, xyxy[1] - cy),
            (xyxy[2] - cx, xyxy[3] - cy),
            (xyxy[0] - cx, xyxy[3] - cy),
        )
    ]


def polygon_overlap(gt: Box, gt_angle: float, pred: Box, pred_angle: float) -> float:
    """The area of two rotated boxes' intersection, by shapely (GEOS)."""
    import shapely

    a, b = shapely.Polygon(polygon(gt, gt_angle)), shapely.Polygon(polygon(pred, pred_angle))
    return float(a.intersection(b).area)


def polygon_iou(gt: Box, gt_angle: float, pred: Box, pred_angle: float) -> float:
    """IoU of two rotated boxes by shapely (GEOS): the areas are the boxes' own, the overlap the
    polygons' intersection; 0 where the union is 0."""
    intersection = polygon_overlap(gt, gt_angle, pred, pred_angle)
    union = (gt[2] - gt[0]) * (gt[3] - gt[1]) + (pred[2] - pred[0]) * (pred[3] - pred[1]) - intersection
    return intersection / union if union > 0 else 0.0


def box_iou(gt: GtBox, pred: PredBox) -> float:
    if gt.angle % 360 == 0 and pred.angle % 360 == 0:
        return iou(gt.xyxy, pred.xyxy)
    return polygon_iou(gt.xyxy, gt.angle, pred.xyxy, pred.angle)


def greedy(candidates: list[Match]) -> list[Match]:
    """Literal greedy: best remaining pair (IoU desc, pred asc, GT asc), again and again."""
    remaining = list(candidates)
    accepted: list[Match] = []
    while remaining:
        best = remaining[0]
        for pair in remaining[1:]:
            if (-pair.iou, pair.pred, pair.gt) < (-best.iou, best.pred, best.gt):
                best = pair
        accepted.append(best)
        remaining = [p for p in remaining if p.pred != best.pred and p.gt != best.gt]
    return accepted


# The IoU of prediction i and GT box j of an image, where it is not its boxes' (masks: pycocotools').
PairIou = Callable[[int, int], float]


def evaluate_image(
    image: RefImage, threshold: float, iou_min: float, iou_perfect: float, pair_iou: PairIou | None = None
) -> ImageResult:
    kept = [i for i, p in enumerate(image.preds) if not p.confidence < threshold]
    candidates = []
    for i in kept:
        for j, g in enumerate(image.gt):
            value = box_iou(g, image.preds[i]) if pair_iou is None else pair_iou(i, j)
            if value >= iou_min:
                candidates.append(Match(pred=i, gt=j, iou=value))
    matches = greedy(candidates)

    pred_outcomes: list[str | None] = [None] * len(image.preds)
    for i in kept:
        pred_outcomes[i] = FALSE_POSITIVE
    gt_outcomes = [FALSE_NEGATIVE] * len(image.gt)
    for m in matches:
        if image.preds[m.pred].class_id != image.gt[m.gt].class_id:
            outcome = CLASS_CONFUSED
        elif m.iou >= iou_perfect:
            outcome = CORRECT
        else:
            outcome = SHIFTED
        pred_outcomes[m.pred] = outcome
        gt_outcomes[m.gt] = outcome
    return ImageResult(tuple(matches), tuple(gt_outcomes), tuple(pred_outcomes))


def score(correct: int, shifted: int, class_confused: int, total: int) -> Fraction:
    if total == 0:
        return Fraction(0)
    return (correct + Fraction(1, 2) * shifted + Fraction(1, 2) * class_confused) / total


def grade(correct: int, shifted: int, class_confused: int, total: int) -> str:
    value = score(correct, shifted, class_confused, total)
    for name, bound in GRADE_BOUNDS:
        if value >= bound:
            return name
    raise AssertionError("unreachable: the last bound is 0")


def evaluate(
    images: list[RefImage],
    threshold: float,
    iou_min: float,
    iou_perfect: float,
    pair_ious: list[PairIou] | None = None,
) -> Evaluation:
    """`pair_ious`: each image's IoU of a pair, where it is not its boxes'."""
    ious = pair_ious if pair_ious is not None else [None] * len(images)
    results = tuple(
        evaluate_image(im, threshold, iou_min, iou_perfect, pair_iou)
        for im, pair_iou in zip(images, ious, strict=True)
    )
    counts = dict.fromkeys(OUTCOME_NAMES, 0)
    same_class_ious: list[float] = []
    for image, result in zip(images, results, strict=True):
        for m in result.matches:
            outcome = result.pred_outcomes[m.pred]
            assert outcome is not None
            counts[outcome] += 1
            if outcome in (CORRECT, SHIFTED):
                same_class_ious.append(m.iou)
        counts[FALSE_POSITIVE] += sum(o == FALSE_POSITIVE for o in result.pred_outcomes)
        counts[FALSE_NEGATIVE] += sum(o == FALSE_NEGATIVE for o in result.gt_outcomes)
        assert len(result.gt_outcomes) == len(image.gt)
    total = sum(counts.values())
    counts["total"] = total
    mean = math.fsum(same_class_ious) / len(same_class_ious) if same_class_ious else None
    args = (counts[CORRECT], counts[SHIFTED], counts[CLASS_CONFUSED], total)
    return Evaluation(
        images=results,
        counts=counts,
        same_class_ious=tuple(same_class_ious),
        mean_iou=mean,
        score=score(*args),
        grade=grade(*args),
    )
