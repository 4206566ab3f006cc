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

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Final

import numpy as np

from handler.boxes import (
    UNKNOWN_CLASS,
    BoxTable,
    Dataset,
    FloatArray,
    Images,
    IntArray,
    Parsed,
    ParsedRows,
    box_area,
)
from handler.datasets.builder import rebuild
from handler.datasets.pairing import pair_datasets, shared_images
from handler.engine.analyses.confusions import CONFUSIONS
from handler.engine.analyses.per_class import PER_CLASS
from handler.engine.analyses.per_image import PER_IMAGE
from handler.engine.bootstrap import seeded_sample
from handler.engine.breakdowns import counts_by_image
from handler.engine.counts import OutcomeCounts
from handler.engine.evaluation import Evaluation, Thresholds, evaluate, keep_mask
from handler.engine.iou import iou_of_overlap, overlap
from handler.engine.matching import enumerate_ranges
from handler.engine.outcomes import Outcome
from handler.engine.readings import boxes, classes, frames
from handler.engine.readings.reading import (
    SAMPLE_ROWS,
    Combined,
    Reading,
    apply,
    matched_matrix,
    pixel_frame,
    sample,
)
from handler.engine.readings.verdict import Gain, Rescored, paired_gain
from handler.engine.state import EvaluationState
from handler.errors import DatasetError

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
# A class reading goes on when it makes this share of the matched pairs (at least SAME_CLASS_MIN) same-class.
SAME_CLASS_SHARE: Final = 0.05
SAME_CLASS_MIN: Final = 3
# A scale read from box sizes is refined this many times on the pairs it matches.
REFINE_STEPS: Final = 2
AS_READ: Final = Combined(())


@dataclass(frozen=True)
class Sides:
    """Both sides as the run read them (after the readings their options gave)."""

    gt: Dataset
    pred: Dataset
    gt_ids: dict[int, str] | None  # the GT's own numeric class ids (a COCO file's category ids)


# Rows looked at a block at a time: the block's few small buffers are reused, where one pass over
# millions of rows would make fresh arrays of their size (first-touch page faults: 160 ms at 4.3M rows).
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


@dataclass(frozen=True)
class Probe:
    """Some shared images (in the run's order), each side's rows on them only."""

    gt: Parsed | Dataset
    pred: Parsed
    images: int

    @classmethod
    def of(cls, sides: Sides, shared: IntArray) -> Probe:
        gt_images, pred_images = shared_images(sides.gt, sides.pred)
        gt_on, pred_on = gt_images[shared], pred_images[shared]  # each side's, in the run's order
        gt = _boxes_on(sides.gt, gt_on) if sides.gt.parsed is None else _on_images(sides.gt.parsed, gt_on)
        if sides.pred.parsed is None:
            raise ValueError("the predictions' rows are needed to read them again")
        return cls(gt, _on_images(sides.pred.parsed, pred_on), len(shared))

    def datasets(self, candidate: Combined) -> tuple[Dataset, Dataset]:
        gt = rebuild(self.gt, *apply(candidate.of("gt"), self.gt)) if isinstance(self.gt, Parsed) else self.gt
        return gt, rebuild(self.pred, *apply(candidate.of("pred"), self.pred))

    @cached_property
    def crowded_as_read(self) -> set[str]:
        """The probe's images too crowded to match with the rows as read."""
        return {image.asset_id for image in pair_datasets(*self.datasets(AS_READ)).crowded}

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


@dataclass(frozen=True)
class Placer:
    """How many GT boxes some prediction overlaps well (IoU ≥ IOU_PERFECT, any class) under a
    geometry: a count over the same-image pairs of GT rows and kept prediction rows, numpy only,
    so that every geometry can be tried on every run for the price of a few array passes."""

    probe: Probe
    gt_row: IntArray  # per pair
    pred_row: IntArray
    gt_boxes: FloatArray  # per pair: the GT box as read, and its area
    gt_area: FloatArray
    iou_perfect: float

    @classmethod
    def of(cls, probe: Probe, thresholds: Thresholds) -> Placer:
        gt_image = probe.gt.rows.image if isinstance(probe.gt, Parsed) else probe.gt.boxes.image
        rows = probe.pred.rows
        confidence = rows.confidence if rows.confidence is not None else np.ones(len(rows))
        kept = np.flatnonzero(keep_mask(np.nan_to_num(confidence, nan=1.0), thresholds.confidence_threshold))
        pred_image = rows.image[kept]
        order = np.argsort(pred_image, kind="stable")
        starts = np.searchsorted(pred_image[order], gt_image, "left")
        counts = _within_budget(gt_image, np.searchsorted(pred_image[order], gt_image, "right") - starts)
        gt_row, at = enumerate_ranges(starts, counts)
        gt_boxes = _gt_pixels(probe, AS_READ)[gt_row]
        return cls(probe, gt_row, kept[order[at]], gt_boxes, box_area(gt_boxes), thresholds.iou_perfect)

    def placed(self, candidate: Combined) -> int:
        probe = self.probe
        if candidate.of("gt"):
            a = _gt_pixels(probe, candidate)[self.gt_row]
            area_a = box_area(a)
        else:
            a, area_a = self.gt_boxes, self.gt_area
        b = _pixels(probe.pred, apply(candidate.of("pred"), probe.pred)[0])[self.pred_row]
        area_b = box_area(b)
        with np.errstate(invalid="ignore", over="ignore"):
            width, height = (
                overlap(a[:, 0], a[:, 2], b[:, 0], b[:, 2]),
                overlap(a[:, 1], a[:, 3], b[:, 1], b[:, 3]),
            )
            iou = iou_of_overlap(width, height, area_a, area_b)
            good = (iou >= self.iou_perfect) & (area_a > 0) & (area_b > 0)
        if not len(good):
            return 0
        return int(np.count_nonzero(np.bincount(self.gt_row[good], minlength=1)))


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


def _geometries(probe: Probe) -> list[Combined]:
    """Every geometry of the predictions and of the GT worth placing: each box convention (and axis
    order) the rows make boxes in, each frame their coordinates fit, and both at once where the
    data forces the frame (coordinates all within 0-1: TF's normalised `[ymin, xmin, ymax, xmax]`)."""
    pred_rows = sample(probe.pred.rows)
    gt = probe.gt
    if isinstance(gt, Parsed):
        other, other_normalized = gt.rows.xyxy, not pixel_frame(gt.rows)
    else:
        other, other_normalized = gt.boxes.xyxy, gt.normalized
    as_read = replace(probe.pred, rows=pred_rows)
    kinds = [kind for kind in boxes.candidates(pred_rows, "pred") if _inside(kind, as_read)]
    found = [Combined((kind,)) for kind in kinds]
    found += [
        Combined((frame,))
        for frame in frames.candidates(as_read, pred_rows, sample_boxes(other), other_normalized, "pred")
    ]
    if not other_normalized:
        for kind in kinds:
            rows, _ = apply((kind,), as_read)
            found += [Combined((kind, frame)) for frame in frames.forced(rows, "pred")]
    if isinstance(gt, Parsed):
        gt_rows = sample(gt.rows)
        mine = replace(gt, rows=gt_rows)
        found += [Combined((kind,)) for kind in boxes.candidates(gt_rows, "gt") if _inside(kind, mine)]
    return found


def _inside(kind: Reading, parsed: Parsed) -> bool:
    """A box convention whose pixel boxes leave their images is not the one they were written in
    (normalised rows: every convention stays in)."""
    rows, _ = apply((kind,), parsed)
    return not pixel_frame(rows) or frames.inside_share(parsed, rows, rows.xyxy) >= frames.INSIDE_SHARE_MIN


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


def _placing(head: Probe, thresholds: Thresholds) -> list[Combined]:
    """The geometries that place clearly more boxes than the rows as read on the `head` of the
    probe, best first, a few a side (a scale refined on the pairs it matches)."""
    placer = Placer.of(head, thresholds)
    floor = placer.placed(AS_READ)
    scored = []
    for candidate in _geometries(placer.probe):
        candidate = _refined(candidate, placer.probe, thresholds)  # a scale: on the pairs it matches
        placed = placer.placed(candidate)
        if placed >= max(PLACED_RATIO * floor, floor + PLACED_MIN):
            scored.append((placed, candidate))
    scored.sort(key=lambda item: -item[0])
    kept = [c for _, c in scored if c.of("pred")][:KEPT_GEOMETRIES]
    return kept + [c for _, c in scored if c.of("gt")][:KEPT_GEOMETRIES]


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
    match = evaluation.outcomes.match
    matched = np.flatnonzero(match.pred_match >= 0)
    gt_class, pred_class = (
        evaluation.gt.class_id[match.pred_match[matched]],
        evaluation.pred.class_id[matched],
    )
    return names, matched_matrix(gt_class, pred_class, len(names))


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
    return [
        geometry.plus(reading)
        for reading in classes.candidates(parsed, names, matrix, sides.gt.class_names, sides.gt_ids)
        if unknown or _same_class_gain(reading, read_as, names, matrix) >= least
    ]


def _score(counts: IntArray) -> float:
    return OutcomeCounts(counts.sum(axis=0)).score


@dataclass
class Search:
    """One run's search: its sides and merged state, the probe's images, each probe built when used
    (a clean run builds only the head the geometries are placed on)."""

    sides: Sides
    state: EvaluationState
    thresholds: Thresholds
    chosen: IntArray

    @cached_property
    def probe(self) -> Probe:
        return Probe.of(self.sides, self.chosen)

    @cached_property
    def head(self) -> Probe:
        return Probe.of(self.sides, self.chosen[:PLACE_IMAGES])

    def candidates(self) -> list[Combined]:
        """Every candidate the probe promotes: geometries, class readings under each, both."""
        geometries = _placing(self.head, self.thresholds)
        found = list(geometries)
        for geometry in [AS_READ, *(g for g in geometries if not g.of("gt"))]:
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
