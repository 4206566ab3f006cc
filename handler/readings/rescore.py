"""Re-score, don't guess: how each side was written is inferred from the data with the same engine.

Every run is looked at (no pre-check a small offset could slip under), on a seeded sample of at
most SCREEN_IMAGES shared images (the probe):

1. **geometry**, jointly, on each side: every box convention and axis order in which the rows make
   boxes, times every frame their coordinates fit (normalised, a network input of a usual size and
   mode, a global scale), for the predictions; box conventions for the ground truth; a frame or a
   convention whose boxes would leave their images is none. Each is scored by a numpy count
   (`Placer`) of the GT boxes some kept prediction overlaps with IoU ≥ IOU_PERFECT, any class, over
   the same-image pairs of rows of the probe's first PLACE_IMAGES images (no matching); the best
   few that place clearly more than the rows as read go on;
2. **classes**, under each geometry kept (and the rows' own): the class readings the matched pairs
   suggest (numeric ids as places in the GT's list, shifted ids, the one-to-one mapping the matches
   follow), promoted when they would make clearly more matched pairs same-class;
3. **the verdict**: each candidate (a geometry, a class reading, or both: two mistakes at once) is
   evaluated on the whole probe and compared with the rows as read by the paired bootstrap
   (`readings.verdict`); the clear one with the best score is re-scored on every shared image and
   must pass again: that score is the one the warning gives, exactly what applying its options gives.

A prediction-side reading is preferred to a ground-truth one at equal score: the ground truth is
the trusted side, and is blamed only for what no reading of the predictions explains.
"""

from __future__ import annotations

from functools import cached_property, partial
from typing import Final

import msgspec
import numpy as np
from msgspec import field
from msgspec.structs import replace

from handler.boxes import (
    BOX_KINDS,
    UNKNOWN_CLASS,
    BoolArray,
    BoxTable,
    Dataset,
    FloatArray,
    Images,
    IntArray,
    MaskRuns,
    Parsed,
    ParsedRows,
    box_area,
)
from handler.datasets.builder import rebuild
from handler.datasets.pairing import pair_datasets, shared_images
from handler.datasets.segmentation import readable
from handler.engine.analyses.confusions import CONFUSIONS
from handler.engine.analyses.per_class import PER_CLASS
from handler.engine.analyses.per_image import PER_IMAGE
from handler.engine.bootstrap import seeded_sample
from handler.engine.breakdowns import counts_by_image
from handler.engine.counts import OutcomeCounts
from handler.engine.evaluation import Evaluation, Thresholds, evaluate, keep_mask
from handler.engine.iou import iou_of_overlap, overlap
from handler.engine.masks import made
from handler.engine.matching import enumerate_ranges
from handler.engine.outcomes import Outcome
from handler.engine.state import EvaluationState
from handler.errors import DatasetError
from handler.readings import boxes, classes, frames, groups, masks, scores
from handler.readings.reading import (
    SAMPLE_ROWS,
    Combined,
    Reading,
    apply,
    matched_matrix,
    pixel_frame,
    sample,
)
from handler.readings.verdict import Gain, Rescored, paired_gain

SCREEN_IMAGES: Final = 500
# Geometries are first placed on this many images of the probe: enough boxes for a share, cheap.
PLACE_IMAGES: Final = 100
# Row pairs placed at most (a geometry's every pair is a few arrays of this length), and on one
# image: a few hundred boxes a side; one of more is left out (its pairs would crowd out the others).
PLACE_PAIRS: Final = 2_000_000
PLACE_IMAGE_PAIRS: Final = 250_000
# A geometry goes on when it places at least this much more than the rows as read (and PLACED_MIN more).
PLACED_RATIO: Final = 1.1
PLACED_MIN: Final = 3
# Geometries kept per side for the verdict.
KEPT_GEOMETRIES: Final = 2
# A group of images is read another way when at least GROUP_MIN of the probe's head agree on a
# geometry (a class, when one does): each placing at least as many rows more as the base places
# there (GROUP_GAIN_MIN more for a class; an image's group, GROUP_MIN * GROUP_GAIN_MIN in all).
GROUP_MIN: Final = 3
GROUP_GAIN_MIN: Final = 2
# A group of boxes within images: at least MIXED_SHARE of the rows a geometry places share an image
# with rows placed as read, BOXES_MIN of them and BOXES_SHARE of the head's kept rows at least, and
# the classes' group explains fewer than CLASSES_COVER of them.
MIXED_SHARE: Final = 0.3
BOXES_MIN: Final = 10
BOXES_SHARE: Final = 0.05
CLASSES_COVER: Final = 0.9
# A geometry is tried on part of the data when this share of the sampled rows fit it.
PART_SHARE_MIN: Final = 0.1
# A class reading goes on when it makes this share of the matched pairs (at least SAME_CLASS_MIN) same-class.
SAME_CLASS_SHARE: Final = 0.05
SAME_CLASS_MIN: Final = 3
# A scale read from box sizes is refined this many times on the pairs it matches.
REFINE_STEPS: Final = 2
# Rounds of the mapping by matches for classes the categories do not have.
MAPPING_ROUNDS: Final = 3
AS_READ: Final = Combined(())


class Sides(msgspec.Struct, frozen=True):
    """Both sides as the run read them (after the readings their options gave)."""

    gt: Dataset
    pred: Dataset
    gt_ids: dict[int, str] | None  # the GT's own numeric class ids (a COCO file's category ids)


# Rows looked at a block at a time: the block's few small buffers are reused, where one pass over
# millions of rows would make fresh arrays of their size (first-touch page faults: bench/RESULTS.md).
BLOCK_ROWS: Final = 1 << 16


def _rows_on(image: IntArray, renumber: IntArray) -> IntArray:
    """The rows (ascending) whose image has a place in `renumber` (its last slot: no image)."""
    last = len(renumber) - 1
    block = np.empty(min(BLOCK_ROWS, len(image)), dtype=np.int64)
    found = []
    for start in range(0, len(image), BLOCK_ROWS):
        part = block[: min(BLOCK_ROWS, len(image) - start)]
        np.minimum(image[start : start + len(part)], last, out=part)
        np.take(renumber, part, out=part)  # a row on no known image (-1) takes the last slot: -1
        found.append(np.flatnonzero(part >= 0) + start)
    return np.concatenate(found) if found else np.empty(0, dtype=np.int64)


def _on_images(parsed: Parsed, images: IntArray) -> Parsed:
    """The parsed rows of `images` only, the images renumbered 0.. in the order given."""
    # one slot more, the last: a row on no known image (image -1, or past the end) falls there
    last = len(parsed.images.asset_ids)
    renumber = np.full(last + 1, -1, dtype=np.int64)
    renumber[images] = np.arange(len(images))
    rows = parsed.rows
    kept = rows.take(_rows_on(rows.image, renumber))
    kept = replace(kept, image=renumber[np.minimum(kept.image, last)])
    tags = parsed.images.tags
    picked = images.tolist()
    small = Images(
        [parsed.images.asset_ids[i] for i in picked],
        parsed.images.widths[images],
        parsed.images.heights[images],
        None if tags is None else [tags[i] for i in picked],
    )
    return replace(parsed, rows=kept, images=small)


def _boxes_on(dataset: Dataset, images: IntArray) -> Dataset:
    """A dataset without parsed rows, on `images` only (a side that cannot be read again)."""
    renumber = np.full(dataset.image_count, -1, dtype=np.int64)
    renumber[images] = np.arange(len(images))
    new = renumber[dataset.boxes.image]
    kept: BoxTable = dataset.boxes[new >= 0].with_columns(image=new[new >= 0])
    return replace(
        dataset, boxes=kept, asset_ids=[dataset.asset_ids[i] for i in images.tolist()], parsed=None
    )


class Probe(msgspec.Struct, frozen=True, dict=True):
    """Some shared images (in the run's order), each side's rows on them only."""

    gt: Parsed | Dataset
    pred: Parsed
    images: int
    # Both sides' masks are scored and the probe is evaluated under many candidates: each side's
    # are made (rasterised) once for them all. False: pairing makes the paired rows' own (a probe
    # of every image, evaluated once, keeps no second copy of every mask).
    masks_made_once: bool = False
    # Each side's masks as runs, by the side and the mask readings applied (the only readings that
    # change masks).
    made_masks: dict[tuple[str, tuple[str, ...]], MaskRuns] = field(default_factory=dict)

    @classmethod
    def of(cls, sides: Sides, shared: IntArray, evaluated_often: bool = False) -> Probe:
        gt_images, pred_images = shared_images(sides.gt, sides.pred)
        gt_on, pred_on = gt_images[shared], pred_images[shared]  # each side's, in the run's order
        gt = _boxes_on(sides.gt, gt_on) if sides.gt.parsed is None else _on_images(sides.gt.parsed, gt_on)
        if sides.pred.parsed is None:
            raise ValueError("the predictions' rows are needed to read them again")
        once = evaluated_often and sides.gt.boxes.has_masks and sides.pred.boxes.has_masks
        return cls(gt, _on_images(sides.pred.parsed, pred_on), len(shared), once)

    def datasets(self, candidate: Combined, with_masks: bool = True) -> tuple[Dataset, Dataset]:
        """Both sides read as the candidate says (`with_masks` False: their boxes only)."""
        read = partial(self._read, candidate, with_masks=with_masks)
        gt = rebuild(self.gt, *read("gt")) if isinstance(self.gt, Parsed) else self.gt
        return gt, rebuild(self.pred, *read("pred"))

    def _read(self, candidate: Combined, side: str, with_masks: bool) -> tuple[ParsedRows, list[str]]:
        """The side's rows read as the candidate says, their masks made where they are scored."""
        parsed = self.pred if side == "pred" else self.gt
        assert isinstance(parsed, Parsed)  # a GT without rows is not read again
        readings = candidate.of(side)
        rows, names = apply(readings, parsed)
        if not with_masks:
            return replace(rows, masks=None), names
        if rows.masks is None or not self.masks_made_once:
            return rows, names
        key = (side, tuple(r.value for r in readings if r.family == masks.FAMILY))
        if key not in self.made_masks:
            self.made_masks[key] = made(readable(rows.masks))
        return replace(rows, masks=self.made_masks[key]), names

    @cached_property
    def crowded_as_read(self) -> set[str]:
        """The probe's images too crowded to match with the rows as read (counted on boxes: no
        mask is made for it)."""
        return {image.asset_id for image in pair_datasets(*self.datasets(AS_READ, with_masks=False)).crowded}

    def evaluate(self, candidate: Combined, thresholds: Thresholds) -> tuple[Evaluation, list[str]] | None:
        """The candidate's evaluation on the probe's images, and the paired class names; None when
        the candidate is no reading of these files (normalised boxes on images of unknown size), or
        leaves an image too crowded to match that the rows as read do not (its boxes skipped would
        count as no work)."""
        try:
            gt, pred = self.datasets(candidate)
            paired = pair_datasets(gt, pred)
        except DatasetError:
            return None
        crowded = {image.asset_id for image in paired.crowded}
        if crowded and crowded - self.crowded_as_read:
            return None
        return evaluate(paired.gt, paired.pred, len(paired.asset_ids), thresholds), paired.class_names

    def counts(self, candidate: Combined, thresholds: Thresholds) -> IntArray | None:
        """(images, N_OUTCOMES) outcome counts of the candidate on the probe's images."""
        found = self.evaluate(candidate, thresholds)
        return None if found is None else counts_by_image(found[0], self.images)


def _pixels(parsed: Parsed, rows: ParsedRows) -> FloatArray:
    """The rows' corners in pixels (normalised rows times their image's size; NaN if unknown)."""
    if rows.normalized is None or not rows.normalized.any():
        return rows.xyxy
    width, height = frames.row_sizes(parsed, rows)
    factor = np.where(rows.normalized[:, None], np.stack((width, height, width, height), axis=1), 1.0)
    xyxy: FloatArray = rows.xyxy * factor
    return xyxy


class Placer(msgspec.Struct, frozen=True):
    """How many GT boxes some prediction overlaps well (IoU ≥ IOU_PERFECT, any class) under a
    geometry: a count over the same-image pairs of GT rows and kept prediction rows, numpy only,
    so that every geometry can be tried on every run for the price of a few array passes."""

    probe: Probe
    gt_row: IntArray  # per pair
    pred_row: IntArray
    gt_boxes: FloatArray  # per pair: the GT box as read, and its area
    gt_area: FloatArray
    iou_perfect: float
    iou_min: float
    seen: dict[tuple[tuple[str, str, tuple[str, ...]], ...], BoolArray] = field(default_factory=dict)

    @classmethod
    def of(cls, probe: Probe, thresholds: Thresholds) -> Placer:
        gt_image = probe.gt.rows.image if isinstance(probe.gt, Parsed) else probe.gt.boxes.image
        rows = probe.pred.rows
        confidence = rows.confidence if rows.confidence is not None else np.ones(len(rows))
        kept = np.flatnonzero(keep_mask(np.nan_to_num(confidence, nan=1.0), thresholds.confidence_threshold))
        # only the kept rows are placed: every geometry is applied to them alone
        probe = replace(probe, pred=replace(probe.pred, rows=rows.take(kept)))
        pred_image = probe.pred.rows.image
        order = np.argsort(pred_image, kind="stable")
        starts = np.searchsorted(pred_image[order], gt_image, "left")
        counts = _within_budget(gt_image, np.searchsorted(pred_image[order], gt_image, "right") - starts)
        gt_row, at = enumerate_ranges(starts, counts)
        gt_boxes = _gt_pixels(probe, AS_READ)[gt_row]
        return cls(
            probe, gt_row, order[at], gt_boxes, box_area(gt_boxes), thresholds.iou_perfect, thresholds.iou_min
        )

    def _good(self, candidate: Combined) -> BoolArray:
        """Per pair, whether its boxes overlap with IoU ≥ IOU_PERFECT under the candidate (once per
        candidate: the whole side's search and the groups' place many of the same)."""
        key = candidate.key
        if key not in self.seen:
            self.seen[key] = self._placed_pairs(candidate)
        return self.seen[key]

    def _placed_pairs(self, candidate: Combined) -> BoolArray:
        with np.errstate(invalid="ignore"):
            good: BoolArray = self._pair_iou(candidate) >= self.iou_perfect
        return good

    def _pair_iou(self, candidate: Combined) -> FloatArray:
        """Per pair, the IoU of its boxes under the candidate (NaN where a box has no area)."""
        probe = self.probe
        a = _gt_pixels(probe, candidate)[self.gt_row] if candidate.of("gt") else self.gt_boxes
        b = _pixels(probe.pred, apply(candidate.of("pred"), probe.pred)[0])[self.pred_row]
        return _pairwise_iou(a, b)

    def placed_extents(self, gt: FloatArray | None, pred: FloatArray | None) -> int:
        """The GT rows some pair places (IoU ≥ IOU_PERFECT) when each row's box is its `gt` or
        `pred` one (per row; None: as read): where a side's masks' extents land."""
        a = self.gt_boxes if gt is None else gt[self.gt_row]
        pred_boxes = _pixels(self.probe.pred, self.probe.pred.rows) if pred is None else pred
        with np.errstate(invalid="ignore"):
            good = _pairwise_iou(a, pred_boxes[self.pred_row]) >= self.iou_perfect
        return len(np.unique(self.gt_row[good]))

    def _side(self, side: str) -> tuple[IntArray, int]:
        """The pairs' rows of `side`, and how many rows it has on the probe."""
        if side == "gt":
            gt = self.probe.gt
            return self.gt_row, len(gt.rows) if isinstance(gt, Parsed) else len(gt.boxes)
        return self.pred_row, len(self.probe.pred.rows)

    def _boxes_of(self, candidate: Combined, side: str) -> FloatArray:
        """Each row's box of `side` under the candidate, in pixels."""
        if side == "gt":
            return _gt_pixels(self.probe, candidate)
        return _pixels(self.probe.pred, apply(candidate.of("pred"), self.probe.pred)[0])

    def _best_iou(self, candidate: Combined, side: str = "pred") -> FloatArray:
        """Per row of `side`, its best IoU with a box of the other side under the candidate (0: none)."""
        pair_row, count = self._side(side)
        best = np.zeros(count)
        np.fmax.at(best, pair_row, self._pair_iou(candidate))
        return best

    def moved_onto(self, candidate: Combined, base: Combined, side: str = "pred") -> BoolArray:
        """Per row of `side`, whether the candidate places it (IoU ≥ IOU_PERFECT with a box of the
        other side) far from where `base` puts it (IoU < IOU_MIN between the two): the rows a step
        of the pipeline wrote, not the ones a model placed a little off (a transform near the
        identity would pick those one by one)."""
        a, b = self._boxes_of(base, side), self._boxes_of(candidate, side)
        itself = _pairwise_iou(a, b)
        with np.errstate(invalid="ignore"):
            found: BoolArray = self.placed_rows(candidate, side) & ~(itself >= self.iou_min)
        return found

    def closer_rows(self, candidate: Combined, base: Combined, side: str = "pred") -> BoolArray:
        """Per row of `side`, whether the candidate brings it onto a box of the other side (IoU ≥
        IOU_MIN) closer than `base` does (a group's members, once `moved_onto` found the group)."""
        best = self._best_iou(candidate, side)
        found: BoolArray = (best >= self.iou_min) & (best > self._best_iou(base, side))
        return found

    def size_ratio(self, candidate: Combined) -> float | None:
        """The median GT / prediction box size over the pairs the candidate places (None: none)."""
        good = self._good(candidate)
        if not np.any(good):
            return None
        pred = _pixels(self.probe.pred, apply(candidate.of("pred"), self.probe.pred)[0])[self.pred_row[good]]
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.sqrt(self.gt_area[good] / box_area(pred))
        return float(np.median(ratio))

    def placed(self, candidate: Combined) -> int:
        good = self._good(candidate)
        if not len(good):
            return 0
        return int(np.count_nonzero(np.bincount(self.gt_row[good], minlength=1)))

    def placed_rows(self, candidate: Combined, side: str = "pred") -> BoolArray:
        """Per row of `side` on the probe, whether it overlaps some box of the other side well
        under the candidate."""
        pair_row, count = self._side(side)
        found = np.zeros(count, dtype=bool)
        found[pair_row[self._good(candidate)]] = True
        return found

    def unplaced(self, base: Combined) -> tuple[Placer, IntArray]:
        """The pairs of rows `base` leaves unplaced (neither the GT box nor the prediction overlaps
        any well), the probe's prediction rows cut to theirs; and those rows (ascending). Where a
        part of the data read another way shows, for a fraction of the pairs of a run read right."""
        good = self._good(base)
        gt_done = np.zeros(int(self.gt_row.max(initial=-1)) + 1, dtype=bool)
        gt_done[self.gt_row[good]] = True
        pred_done = self.placed_rows(base)
        keep = ~gt_done[self.gt_row] & ~pred_done[self.pred_row]
        rows = np.unique(self.pred_row[keep])
        pred = replace(self.probe.pred, rows=self.probe.pred.rows.take(rows))
        placer = Placer(
            replace(self.probe, pred=pred),
            self.gt_row[keep],
            np.searchsorted(rows, self.pred_row[keep]),
            self.gt_boxes[keep],
            self.gt_area[keep],
            self.iou_perfect,
            self.iou_min,
        )
        return placer, rows


def _pairwise_iou(a: FloatArray, b: FloatArray) -> FloatArray:
    """IoU of boxes `a[i]` and `b[i]` (NaN where either has no area)."""
    area_a, area_b = box_area(a), box_area(b)
    with np.errstate(invalid="ignore", over="ignore"):
        width = overlap(a[:, 0], a[:, 2], b[:, 0], b[:, 2])
        height = overlap(a[:, 1], a[:, 3], b[:, 1], b[:, 3])
        iou: FloatArray = np.where(
            (area_a > 0) & (area_b > 0), iou_of_overlap(width, height, area_a, area_b), np.nan
        )
    return iou


def _within_budget(gt_image: IntArray, counts: IntArray) -> IntArray:
    """Per GT row, its pair count, or 0 past the images whose pairs fit PLACE_PAIRS (in the probe's
    order; an image with more than PLACE_IMAGE_PAIRS is left out: a degenerate image places nothing)."""
    per_image = np.bincount(gt_image, weights=counts) if len(gt_image) else np.zeros(0)
    fits = per_image <= PLACE_IMAGE_PAIRS
    used = fits & (np.cumsum(np.where(fits, per_image, 0)) <= PLACE_PAIRS)
    return np.where(used[gt_image], counts, 0) if len(gt_image) else counts


def _gt_pixels(probe: Probe, candidate: Combined) -> FloatArray:
    gt = probe.gt
    if isinstance(gt, Parsed):
        return _pixels(gt, apply(candidate.of("gt"), gt)[0])
    return gt.boxes.xyxy


def _geometries(probe: Probe, share: float = boxes.VALID_SHARE_MIN) -> list[Combined]:
    """Every geometry of the predictions and of the GT worth placing: each box convention (and axis
    order) the rows make boxes in, each frame their coordinates fit, and both at once (corners
    inside a network input, TF's normalised `[ymin, xmin, ymax, xmax]`); the GT's conventions and
    the frame its coordinates force (a GT written in 0-1). With a `share` below the strict one: the
    predictions' geometries that `share` of the rows fit (a step applied to part of the data)."""
    pred_rows = sample(probe.pred.rows)
    gt = probe.gt
    if isinstance(gt, Parsed):
        other, other_normalized = gt.rows.xyxy, not pixel_frame(gt.rows)
    else:
        other, other_normalized = gt.boxes.xyxy, gt.normalized
    as_read = replace(probe.pred, rows=pred_rows)
    inside_min = min(share, frames.INSIDE_SHARE_MIN)
    strict = share >= boxes.VALID_SHARE_MIN
    kinds = boxes.candidates(pred_rows, "pred", share)
    found = [Combined((kind,)) for kind in kinds if _inside(kind, as_read, inside_min)]
    found += [
        Combined((frame,))
        for frame in frames.candidates(
            as_read, pred_rows, sample_boxes(other), other_normalized, "pred", inside_min, not strict
        )
    ]
    # a convention's boxes may leave their images until their frame is undone; a part's, x first
    # (a network's output: the y-first conventions are TF's, normalised, read whole), in the
    # network sizes its rows read so fit
    for kind in [kind for kind in kinds if strict or kind.value in BOX_KINDS]:
        rows, _ = apply((kind,), as_read)
        read = replace(as_read, rows=rows)
        joint = frames.candidates(read, rows, sample_boxes(other), other_normalized, "pred", inside_min)
        found += [Combined((kind, frame)) for frame in joint if _joins(frame)]
    if isinstance(gt, Parsed) and strict:
        found += _gt_geometries(replace(gt, rows=sample(gt.rows)))
    return found


def _joins(frame: Reading) -> bool:
    """A frame tried with another reading (a convention, a part of the rows): not a scale (its size
    ratio is the whole side's) nor sizes swapped (a mistake of normalised rows, which are read whole)."""
    return not frame.value.startswith(frames.SCALE) and frame.value != frames.SWAPPED


def _gt_geometries(gt: Parsed) -> list[Combined]:
    """The GT's box conventions, the frame its coordinates force (normalised), and both at once."""
    kinds = boxes.candidates(gt.rows, "gt")
    found = [Combined((kind,)) for kind in kinds if _inside(kind, gt)]
    found += [Combined((frame,)) for frame in frames.forced(gt.rows, "gt")]
    for kind in kinds:
        rows, _ = apply((kind,), gt)
        found += [Combined((kind, frame)) for frame in frames.forced(rows, "gt")]
    return found


def _inside(kind: Reading, parsed: Parsed, inside_min: float = frames.INSIDE_SHARE_MIN) -> bool:
    """A box convention whose pixel boxes leave their images is not the one they were written in
    (normalised rows: every convention stays in); `inside_min` of them in: a part's may be."""
    rows, _ = apply((kind,), parsed)
    return not pixel_frame(rows) or frames.inside_share(parsed, rows, rows.xyxy) >= inside_min


def sample_boxes(xyxy: FloatArray) -> FloatArray:
    """Up to about SAMPLE_ROWS boxes, evenly spread (as `sample` takes rows)."""
    return xyxy[:: max(1, len(xyxy) // SAMPLE_ROWS)]


def _refined(candidate: Combined, probe: Probe, thresholds: Thresholds) -> Combined:
    """A global scale estimated again from the pairs it matches (others as they are)."""
    scale = next(
        (p for p in candidate.parts if p.family == "frame" and p.value.startswith(frames.SCALE)), None
    )
    for _ in range(REFINE_STEPS):
        if scale is None:
            return candidate
        found = probe.evaluate(candidate, thresholds)
        ratio = None if found is None else frames.size_ratio(found[0])
        if ratio is None:
            return candidate
        better = frames.rescaled(scale, ratio)
        candidate = Combined(tuple(better if p is scale else p for p in candidate.parts))
        scale = better
    return candidate


class Placed(msgspec.Struct, frozen=True):
    """The geometries placed on the head of the probe: those that place clearly more than the rows
    read with `base` (`kept`, best first, a few a side), and every one tried, each with `base`."""

    placer: Placer
    base: Combined
    kept: list[Combined]
    tried: list[Combined]


def _placing(head: Probe, thresholds: Thresholds, base: Combined) -> Placed:
    """Every geometry placed on the `head` of the probe, each with `base` (a scale refined on the
    pairs it matches)."""
    placer = Placer.of(head, thresholds)
    floor = placer.placed(base)
    scored, tried = [], []
    for geometry in _geometries(placer.probe):
        # a scale is refined on the pairs it matches
        candidate = _refined(Combined((*base.parts, *geometry.parts)), placer.probe, thresholds)
        tried.append(candidate)
        placed = placer.placed(candidate)
        if placed >= max(PLACED_RATIO * floor, floor + PLACED_MIN):
            scored.append((placed, candidate))
    scored.sort(key=lambda item: -item[0])
    kept = [c for _, c in scored if not c.of("gt")][:KEPT_GEOMETRIES]
    return Placed(placer, base, kept + [c for _, c in scored if c.of("gt")][:KEPT_GEOMETRIES], tried)


def _mask_candidates(placer: Placer, base: Combined) -> list[Combined]:
    """The mask readings of each side, and of both at once, whose masks' extents land on each
    other (or on the other side's boxes) clearly more often than the masks as read
    (`masks.extents`), each with `base`: the best KEPT_GEOMETRIES."""
    probe = placer.probe
    pred = _mask_options(probe.pred, "pred")
    gt = _mask_options(probe.gt, "gt") if isinstance(probe.gt, Parsed) else [((), None)]
    placed = {
        (g, p): placer.placed_extents(gt_extents, pred_extents)
        for g, (_, gt_extents) in enumerate(gt)
        for p, (_, pred_extents) in enumerate(pred)
    }
    found = []
    for (g, p), count in placed.items():
        # both sides read another way only when that places clearly more than either alone
        floor = max(placed[0, 0], placed[g, 0], placed[0, p]) if g and p else placed[0, 0]
        if (g or p) and count >= max(PLACED_RATIO * floor, floor + PLACED_MIN):
            found.append((count, Combined((*base.parts, *gt[g][0], *pred[p][0]))))
    found.sort(key=lambda item: -item[0])
    return [candidate for _, candidate in found[:KEPT_GEOMETRIES]]


def _mask_options(parsed: Parsed, side: str) -> list[tuple[tuple[Reading, ...], FloatArray]]:
    """The side's masks as read, then under each mask reading, with their extents (the masks still
    text parsed once)."""
    rows = replace(parsed.rows, masks=masks.readable_masks(parsed.rows.masks))
    parsed = replace(parsed, rows=rows)
    found: list[tuple[tuple[Reading, ...], FloatArray]] = [((), masks.extents(rows.masks, len(rows)))]
    return found + [((r,), masks.extents_under(r, parsed)) for r in masks.candidates(rows, side)]


def _preferring(before: IntArray, new: IntArray, gain_min: int) -> IntArray:
    """The keys (images or classes) whose rows the candidate places clearly better than the base:
    `new` (rows it places that the base leaves unplaced) at least `before` (what the base places:
    twice as many at least) and `gain_min`."""
    return np.flatnonzero(new >= np.maximum(before, gain_min))


def _others_placed(before: IntArray, group: IntArray) -> bool:
    """Some key outside `group` has rows the base places (else the geometry is the whole side's)."""
    others = before.copy()
    others[group] = 0
    return bool((others >= GROUP_GAIN_MIN).any())


def _counted(keys: IntArray, rows: BoolArray, count: int) -> IntArray:
    """Per key, the rows of `rows` (keys -1: none)."""
    return np.bincount(keys[rows & (keys >= 0)], minlength=count)


def _group(
    candidate: Combined,
    base: Combined,
    kind: groups.GroupKind,
    members: frozenset[str],
    total: int,
    images: int = 0,
) -> Combined:
    """The candidate's geometry read on the group's rows only (its `base` on every row)."""
    geometry = [part for part in candidate.parts if part not in base.parts]
    parts = (
        groups.only(part, kind, members, total, said=part is geometry[-1], images=images) for part in geometry
    )
    return Combined((*base.parts, *parts))


class Group(msgspec.Struct, frozen=True):
    """A geometry a group of keys (images, classes; boxes: none, named on every image) agrees on,
    on the probe's head."""

    gained: int  # rows it places that the base does not
    kind: groups.GroupKind
    candidate: Combined
    keys: IntArray


def _part_geometries(probe: Probe, base: Combined) -> list[Combined]:
    """The predictions' geometries part of the rows fit (no scale: its size ratio is the whole
    side's), `probe` holding the rows the base leaves unplaced (a part read another way is most of them)."""
    return [
        Combined((*base.parts, *geometry.parts))
        for geometry in _geometries(probe, PART_SHARE_MIN)
        if all(_joins(part) for part in geometry.parts if part.family == "frame")
    ]


def _within_images(new: BoolArray, image: IntArray, before: IntArray, kept: int) -> bool:
    """The rows a geometry places (`new`, on `image`) are a group of boxes within the images:
    enough of them (BOXES_MIN, BOXES_SHARE of the `kept` rows) to be a writer's, most of them on an
    image with rows the base places (a step of one image's pipeline would leave none)."""
    placed = int(np.count_nonzero(new))
    mixed = int(np.count_nonzero(new & (before[image] > 0)))
    return placed >= max(BOXES_MIN, BOXES_SHARE * kept) and mixed >= MIXED_SHARE * placed


def _part_scale(unplaced: Placer, base: Combined) -> list[Combined]:
    """The scale most pairs of rows left unplaced are apart by (a step that scaled part of the
    data), refined on the pairs it places; none near 1."""
    pred = unplaced.probe.pred
    pred_boxes = _pixels(pred, apply(base.of("pred"), pred)[0])[unplaced.pred_row]
    found = frames.fitted_scale(pred_boxes, unplaced.gt_boxes, "pred")
    if found is None:
        return []
    candidate = base.plus(found)
    for _ in range(REFINE_STEPS):
        ratio = unplaced.size_ratio(candidate)
        if ratio is None or not np.isfinite(ratio):
            break
        candidate = base.plus(frames.rescaled(candidate.parts[-1], ratio))
    return [candidate]


def _groups_on_head(head: Placer, base: Combined) -> list[Group]:
    """Each geometry's group of classes, of images and of boxes within images, the best few of each
    kind. A class is in its group when the geometry places at least as many of its rows as the
    base, and GROUP_GAIN_MIN; an image when the geometry moves at least as many of its rows far
    onto a GT box (`moved_onto`) as the base places, and one: GROUP_MIN images at least, with
    GROUP_MIN * GROUP_GAIN_MIN rows between them (a sparse dataset has one or two boxes an image)."""
    base_rows = head.placed_rows(base)
    unplaced, rows = head.unplaced(base)
    pred = head.probe.pred
    class_keys, names = classes.written_keys(pred)
    image, images = pred.rows.image, len(pred.images.asset_ids)
    by_class, by_image = _counted(class_keys, base_rows, len(names)), _counted(image, base_rows, images)
    found = []
    for candidate in _part_geometries(unplaced.probe, base) + _part_scale(unplaced, base):
        new = unplaced.placed_rows(candidate)
        if np.count_nonzero(new) < GROUP_GAIN_MIN:
            continue
        gained = _counted(class_keys[rows], new, len(names))
        chosen = _preferring(by_class, gained, GROUP_GAIN_MIN)
        if len(chosen) and _others_placed(by_class, chosen):
            found.append(Group(int(gained[chosen].sum()), "classes", candidate, chosen))
        if np.count_nonzero(new) < GROUP_MIN * GROUP_GAIN_MIN:
            continue  # too few rows for a group of images or of boxes
        moved = unplaced.moved_onto(candidate, base)
        gained = _counted(image[rows], moved, images)
        chosen = _preferring(by_image, gained, 1)
        enough = len(chosen) >= GROUP_MIN and gained[chosen].sum() >= GROUP_MIN * GROUP_GAIN_MIN
        if enough and _others_placed(by_image, chosen):
            found.append(Group(int(gained[chosen].sum()), "images", candidate, chosen))
        if _within_images(moved, image[rows], by_image, len(base_rows)):
            found.append(Group(int(np.count_nonzero(moved)), "boxes", candidate, np.empty(0, dtype=np.int64)))
    found.sort(key=lambda group: -group.gained)
    kinds: tuple[groups.GroupKind, ...] = ("classes", "images", "boxes")
    return [group for kind in kinds for group in [g for g in found if g.kind == kind][:KEPT_GEOMETRIES]]


def _boxes_group(every: Placer, group: Group, base: Combined) -> Combined:
    """A group of boxes within images named on every shared image: the rows the base leaves
    unplaced that the geometry places."""
    unplaced, rows = every.unplaced(base)
    chosen = rows[unplaced.closer_rows(group.candidate, base)]
    pred_rows = every.probe.pred.rows
    members = frozenset(str(row) for row in groups.row_ids(pred_rows)[chosen].tolist())
    images = len(np.unique(pred_rows.image[chosen]))
    return _group(group.candidate, base, "boxes", members, len(pred_rows), images)


def _group_candidates(search: Search, placed: Placed) -> list[Combined]:
    """Geometries a group of images, of classes or of boxes within images agrees on while the
    others are read right: a step of the pipeline applied to part of the data. Classes (as
    written) are named on the probe's head; images and boxes found there, then named on every
    shared image (one row brought onto a GT box is enough there, the geometry being the group's)."""
    head, base = placed.placer, placed.base
    found = []
    for group in _groups_on_head(head, base):
        if group.kind == "classes":
            _, names = classes.written_keys(head.probe.pred)
            members = frozenset(names[i] for i in group.keys.tolist())
            found.append(_group(group.candidate, base, "classes", members, len(names)))
            continue
        every = search.every_placer
        if group.kind == "boxes":
            found.append(_boxes_group(every, group, base))
            continue
        unplaced, rows = every.unplaced(base)
        image, images = every.probe.pred.rows.image, every.probe.images
        gained = _counted(image[rows], unplaced.closer_rows(group.candidate, base), images)
        chosen = _preferring(_counted(image, every.placed_rows(base), images), gained, 1)
        asset_ids = every.probe.pred.images.asset_ids
        members = frozenset(asset_ids[i] for i in chosen.tolist())
        found.append(_group(group.candidate, base, "images", members, images))
    return found


def _gt_group_candidates(search: Search, placed: Placed) -> list[Combined]:
    """The GT's box conventions a group of its images, or of its boxes within images, agrees on
    while the others are read right (two annotation tools merged), found on the head as for the
    predictions and named on every shared image."""
    head, base = placed.placer, placed.base
    gt = head.probe.gt
    if not isinstance(gt, Parsed):
        return []
    unplaced, _ = head.unplaced(base)
    left = np.unique(unplaced.gt_row)
    image, images = gt.rows.image, len(gt.images.asset_ids)
    before = _counted(image, head.placed_rows(base, "gt"), images)
    found = []
    for kind in boxes.candidates(gt.rows.take(left), "gt", PART_SHARE_MIN):
        candidate = base.plus(kind)
        moved = unplaced.moved_onto(candidate, base, "gt")
        gained = _counted(image, moved, images)
        chosen = _preferring(before, gained, 1)
        in_images = len(chosen) >= GROUP_MIN and gained[chosen].sum() >= GROUP_MIN * GROUP_GAIN_MIN
        # a GT row is placed only on a kept prediction: the fewer of the two bound a group
        if _within_images(moved, image, before, min(len(gt.rows), len(head.probe.pred.rows))):
            found.append(_gt_group(search, candidate, base, "boxes"))
        if in_images and _others_placed(before, chosen):
            found.append(_gt_group(search, candidate, base, "images"))
    return found


def _gt_group(search: Search, candidate: Combined, base: Combined, kind: groups.GroupKind) -> Combined:
    """A GT group named on every shared image: its rows the candidate brings onto a prediction
    closer than as read (boxes), or the images with one at least where none is read right."""
    every = search.every_placer
    gt = every.probe.gt
    assert isinstance(gt, Parsed)  # the head's is
    unplaced, _ = every.unplaced(base)
    closer = unplaced.closer_rows(candidate, base, "gt")
    if kind == "boxes":
        members = frozenset(str(row) for row in groups.row_ids(gt.rows)[closer].tolist())
        return _group(candidate, base, "boxes", members, len(gt.rows), len(np.unique(gt.rows.image[closer])))
    count = len(gt.images.asset_ids)
    gained = _counted(gt.rows.image, closer, count)
    chosen = _preferring(_counted(gt.rows.image, every.placed_rows(base, "gt"), count), gained, 1)
    members = frozenset(gt.images.asset_ids[i] for i in chosen.tolist())
    return _group(candidate, base, "images", members, count)


def _same_class_gain(reading: Reading, read_as: dict[str, str], names: list[str], matrix: IntArray) -> int:
    """How many more matched pairs a class reading makes same-class (read names → GT names)."""
    mapped = dict(reading.class_map)
    translate = {name: mapped[key] for key, name in read_as.items() if key in mapped}
    index = {name: i for i, name in enumerate(names)}
    target = np.array([index.get(translate.get(name, name), -1) for name in names], dtype=np.int64)
    gts, preds = np.nonzero(matrix)
    weights = matrix[gts, preds]
    after = int(weights[target[preds] == gts].sum())
    return after - int(np.trace(matrix))


def _matched(geometry: Combined, search: Search) -> tuple[list[str], IntArray] | None:
    """The paired class names and the class-agnostic matched pairs by (GT, predicted) class: the
    merged run's for the rows as read (no evaluation), the probe's under another geometry."""
    if not geometry.parts:
        run_names, matrix = state_matrix(search.state)
        return list(run_names), matrix
    found = search.probe.evaluate(geometry, search.thresholds)
    if found is None:
        return None
    evaluation, names = found
    return names, _matches(evaluation, names)


def _matches(evaluation: Evaluation, names: list[str]) -> IntArray:
    """The evaluation's class-agnostic matched pairs by (GT, predicted) class over `names`."""
    match = evaluation.outcomes.match
    matched = np.flatnonzero(match.pred_match >= 0)
    gt_class, pred_class = (
        evaluation.gt.class_id[match.pred_match[matched]],
        evaluation.pred.class_id[matched],
    )
    return matched_matrix(gt_class, pred_class, len(names))


def state_matrix(state: EvaluationState) -> tuple[tuple[str, ...], IntArray]:
    """(n, n) class-agnostic matches of the run by (GT class, predicted class), over its class names."""
    per_class, confusions = state.of(PER_CLASS), state.of(CONFUSIONS)
    names = per_class.names
    index = {name: i for i, name in enumerate(names)}
    matrix = np.zeros((len(names), len(names)), dtype=np.int64)
    rows = np.array([index[name] for name in confusions.names], dtype=np.int64).reshape(-1)
    pairs = confusions.pairs
    if len(pairs):
        np.add.at(matrix, (rows[pairs[:, 0]], rows[pairs[:, 1]]), pairs[:, 2])
    diagonal = per_class.counts[:, Outcome.CORRECT] + per_class.counts[:, Outcome.SHIFTED]
    matrix[np.arange(len(names)), np.arange(len(names))] += diagonal
    return names, matrix


def _with_classes(geometry: Combined, search: Search) -> list[Combined]:
    """The class readings worth trying under `geometry`, each with it: for the rows as read, from
    the merged run's matches and an even sample of every row (no evaluation)."""
    sides = search.sides
    found = _matched(geometry, search)
    if found is None:
        return []
    names, matrix = found
    matched = int(matrix.sum())
    if geometry.parts:
        rows, pred_names = apply(geometry.of("pred"), search.probe.pred)
        parsed = replace(search.probe.pred, rows=rows, class_names=pred_names)
    else:
        assert sides.pred.parsed is not None
        parsed = replace(sides.pred.parsed, rows=sample(sides.pred.parsed.rows))
        rows = parsed.rows
    unknown = any(why == UNKNOWN_CLASS for why in rows.reasons.values())
    least = max(SAME_CLASS_MIN, SAME_CLASS_SHARE * matched)
    read_as = classes.read_as_map(parsed)
    found_readings = classes.candidates(parsed, names, matrix, sides.gt.class_names, sides.gt_ids)
    return [
        geometry.plus(reading)
        for reading in found_readings + _unknown_mapped(geometry, search)
        if unknown or _same_class_gain(reading, read_as, names, matrix) >= least
    ]


def _unknown_mapped(geometry: Combined, search: Search) -> list[Reading]:
    """The one-to-one mapping of the classes the categories do not have: first those that spell a
    GT class another way, then by the probe's matches once each class left is read as its own (a
    trainer's own label strings), and the last one left by elimination. Each round's classes,
    read as mapped, leave the GT boxes they took to the classes left."""
    pred, listed = search.probe.pred, search.sides.gt.class_names
    # every prediction is matched: a class kept under the cut only below it is a class all the same
    every_box = replace(search.thresholds, confidence_threshold=0.0)
    rows, pred_names = apply(geometry.of("pred"), pred)
    class_map = classes.spelled_map(replace(pred, rows=rows, class_names=pred_names), listed)
    spelled = len(class_map)
    read = geometry.plus(classes.reading(class_map)) if class_map else geometry
    for _ in range(MAPPING_ROUNDS):
        rows, pred_names = apply(read.of("pred"), pred)
        own = classes.as_own_classes(replace(pred, rows=rows, class_names=pred_names))
        found = None if own is None else search.probe.evaluate(read.plus(own), every_box)
        if own is None or found is None:
            break
        evaluation, names = found
        rows, pred_names = apply(read.plus(own).of("pred"), pred)
        read_own = replace(pred, rows=rows, class_names=pred_names)
        step = classes.own_mapping_candidate(read_own, names, _matches(evaluation, names), own)
        if step is None:
            break
        class_map |= dict(step.class_map)
        read = geometry.plus(classes.reading(class_map))
    rows, pred_names = apply(read.of("pred"), pred)
    last = classes.eliminated(replace(pred, rows=rows, class_names=pred_names), listed, class_map)
    if len(class_map) == spelled and not last:
        return []  # the spelling alone: `name_candidate`'s reading
    return [classes.matched_reading(class_map | last, spelled, bool(last))]


def _score(counts: IntArray) -> float:
    return OutcomeCounts(counts.sum(axis=0)).score


class Search(msgspec.Struct, dict=True):
    """One run's search: its sides and merged state, the probe's images, each probe built when used
    (a clean run builds only the head the geometries are placed on)."""

    sides: Sides
    state: EvaluationState
    thresholds: Thresholds
    chosen: IntArray

    @cached_property
    def probe(self) -> Probe:
        return Probe.of(self.sides, self.chosen, evaluated_often=True)

    @cached_property
    def head(self) -> Probe:
        return Probe.of(self.sides, self.chosen[:PLACE_IMAGES])

    @cached_property
    def every_placer(self) -> Placer:
        """The geometries' placement on every shared image (a group of images named on all of them)."""
        every = np.arange(len(self.state.of(PER_IMAGE).counts), dtype=np.int64)
        return Placer.of(Probe.of(self.sides, every), self.thresholds)

    @property
    def scale(self) -> Combined:
        """The predictions' scores read on the scale their range says on the probe's head (none:
        the rows as read): every other candidate is read with it."""
        found = scores.candidate(self.head.pred.rows)
        return AS_READ if found is None else Combined((found,))

    def candidates(self) -> list[Combined]:
        """Every candidate the probe promotes: the score scale, geometries, class readings under
        each, both."""
        base = self.scale
        placed = _placing(self.head, self.thresholds, base)
        geometries = placed.kept
        found = ([base] if base.parts else []) + geometries + _group_candidates(self, placed)
        found += _gt_group_candidates(self, placed)
        if self.sides.gt.boxes.has_masks and self.sides.pred.boxes.has_masks:
            found += _mask_candidates(placed.placer, base)
        for geometry in [base, *(g for g in geometries if not g.of("gt"))]:
            found += _with_classes(geometry, self)
        return found


def _verdict(
    candidate: Combined, probe: Probe, as_read: IntArray, thresholds: Thresholds
) -> tuple[Gain, IntArray] | None:
    under = probe.counts(candidate, thresholds)
    if under is None:
        return None
    return paired_gain(as_read, under), under


def best_reading(sides: Sides, state: EvaluationState, thresholds: Thresholds) -> Rescored | None:
    """The reading that scores clearly better than the rows as read, with the best score; None if none."""
    per_image = state.of(PER_IMAGE).counts
    if sides.pred.parsed is None or not len(per_image) or state.tally.total == 0:
        return None
    chosen = seeded_sample(len(per_image), SCREEN_IMAGES)
    search = Search(sides, state, thresholds, chosen)
    found = search.candidates()
    if not found:
        return None
    probe, as_read = search.probe, per_image[chosen]
    screened = [(c, _verdict(c, probe, as_read, thresholds)) for c in found]
    passed = [(c, r) for c, r in screened if r is not None and r[0].clear(_score(as_read))]
    if not passed:
        return None
    # the best score; at equal score a reading of the predictions before one of the ground truth
    candidate, (gain, under) = max(passed, key=lambda item: (_score(item[1][1]), not item[0].of("gt")))
    if len(chosen) < len(per_image):
        every = Probe.of(sides, np.arange(len(per_image), dtype=np.int64))
        result = _verdict(candidate, every, per_image, thresholds)
        if result is None or not result[0].clear(_score(per_image)):
            return None
        gain, under = result
    totals = OutcomeCounts(per_image.sum(axis=0)), OutcomeCounts(under.sum(axis=0))
    return Rescored(candidate, len(per_image), totals[0], totals[1], gain, len(found))


def read_with(readings: tuple[Reading, ...], parsed: Parsed) -> Dataset:
    """The dataset of the rows read with `readings`, in turn."""
    return rebuild(parsed, *apply(readings, parsed))
