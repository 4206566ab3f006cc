"""Re-score, don't guess: each plausible reading is evaluated by the same engine and kept only
when it scores clearly better than the rows as read.

"Clearly better" (issue 24) is a gain in assistance score of at least MIN_GAIN whose paired
bootstrap over images (the report's resampling, the same draws for both readings) stays above
MIN_LOW_END at the 99 % level: chance on the images cannot give it. Candidates are screened on
SCREEN_IMAGES images drawn once (all of them when there are no more); the one that passes with
the best score is then re-scored on every shared image, which is the score the warning gives
and exactly what applying its option gives.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

import numpy as np

from handler.boxes import BoxTable, Dataset, IntArray, Parsed
from handler.datasets.builder import rebuild
from handler.datasets.pairing import pair_datasets, shared_images
from handler.engine.analyses.per_image import PER_IMAGE
from handler.engine.bootstrap import SEED
from handler.engine.breakdowns import counts_by_image
from handler.engine.counts import OutcomeCounts
from handler.engine.evaluation import Evaluation, Thresholds, evaluate
from handler.engine.readings import frames
from handler.engine.readings.reading import Evidence, Family, Reading
from handler.engine.readings.verdict import Gain, Rescored, paired_gain
from handler.errors import DatasetError


@dataclass(frozen=True)
class _Images:
    """The shared images scored (in asset order) and the GT restricted to them."""

    shared: IntArray  # rows among the shared images
    pred_images: IntArray  # their images in the predictions' dataset
    gt: Dataset


def _only(boxes: BoxTable, shared: IntArray, n: int) -> BoxTable:
    renumber = np.full(n, -1, dtype=np.int64)
    renumber[shared] = np.arange(len(shared))
    new = renumber[boxes.image]
    keep = new >= 0
    return boxes[keep].with_columns(image=new[keep])


def _images(evidence: Evidence, pred: Dataset, shared: IntArray) -> _Images:
    gt_images, pred_images = shared_images(evidence.gt, pred)
    on = np.zeros(evidence.gt.image_count, dtype=bool)
    on[gt_images[shared]] = True
    gt = replace(evidence.gt, boxes=evidence.gt.boxes[on[evidence.gt.boxes.image]], parsed=None)
    return _Images(shared, pred_images[shared], gt)


def read_with(reading: Reading, parsed: Parsed) -> Dataset:
    """The dataset of the rows read with `reading`."""
    return rebuild(parsed, *reading.transform(parsed))


def evaluated_under(reading: Reading, parsed: Parsed, images: _Images, thresholds: Thresholds) -> Evaluation:
    """The evaluation of the predictions read with `reading`, on `images` (renumbered in order)."""
    on = np.zeros(len(parsed.images.asset_ids), dtype=bool)
    on[images.pred_images] = True
    rows = parsed.rows
    known = (rows.image >= 0) & (rows.image < len(on))
    keep = known & on[np.where(known, rows.image, 0)]
    dataset = read_with(reading, replace(parsed, rows=rows.subset(keep)))
    paired = pair_datasets(images.gt, dataset)
    n = len(paired.asset_ids)
    gt, pred = _only(paired.gt, images.shared, n), _only(paired.pred, images.shared, n)
    return evaluate(gt, pred, len(images.shared), thresholds)


def counts_under(reading: Reading, parsed: Parsed, images: _Images, thresholds: Thresholds) -> IntArray:
    """(images, N_OUTCOMES) outcome counts of the predictions read with `reading`, on `images`."""
    return counts_by_image(evaluated_under(reading, parsed, images, thresholds), len(images.shared))


# A scale read from box sizes is refined this many times on the pairs it matches.
REFINE_STEPS: Final = 2


def refined(reading: Reading, evidence: Evidence, images: _Images, thresholds: Thresholds) -> Reading:
    """A global scale estimated again from the pairs it matches (others are returned as they are)."""
    for _ in range(REFINE_STEPS if reading.value.startswith(frames.SCALE) else 0):
        try:
            ratio = frames.size_ratio(evaluated_under(reading, evidence.parsed, images, thresholds))
        except DatasetError:
            return reading
        if ratio is None:
            return reading
        reading = frames.rescaled(reading, ratio)
    return reading


# Candidates are first re-scored on this many images drawn once (all, when there are no more).
SCREEN_IMAGES: Final = 500


def _score(counts: IntArray) -> float:
    return OutcomeCounts(counts.sum(axis=0)).score


def _screen(n: int) -> IntArray:
    if n <= SCREEN_IMAGES:
        return np.arange(n, dtype=np.int64)
    return np.sort(np.random.default_rng(SEED).choice(n, SCREEN_IMAGES, replace=False)).astype(np.int64)


def candidates(evidence: Evidence, families: tuple[Family, ...]) -> list[Reading]:
    """The readings worth re-scoring: only families whose cheap pre-check fires."""
    return [
        reading
        for family in families
        if family.suspect(evidence.state)
        for reading in family.candidates(evidence)
    ]


def _scored(
    reading: Reading, evidence: Evidence, images: _Images, as_read: IntArray, thresholds: Thresholds
) -> tuple[Gain, IntArray] | None:
    try:
        under = counts_under(reading, evidence.parsed, images, thresholds)
    except DatasetError:  # e.g. normalised boxes on images of unknown size: not a reading of these files
        return None
    return paired_gain(as_read[images.shared], under), under


def best_reading(
    evidence: Evidence, pred: Dataset, thresholds: Thresholds, families: tuple[Family, ...]
) -> Rescored | None:
    """The reading that scores clearly better than the rows as read, with the best score; None if none."""
    found = candidates(evidence, families)
    per_image = evidence.state.of(PER_IMAGE)
    as_read = per_image.counts
    if not found or not len(as_read):
        return None
    screen = _images(evidence, pred, _screen(len(as_read)))
    if len(screen.pred_images) != len(screen.shared):
        return None
    found = [refined(reading, evidence, screen, thresholds) for reading in found]
    scored = [(reading, _scored(reading, evidence, screen, as_read, thresholds)) for reading in found]
    passed = [
        (reading, result)
        for reading, result in scored
        if result is not None and result[0].clear(_score(as_read[screen.shared]))
    ]
    if not passed:
        return None
    reading, (gain, under) = max(passed, key=lambda item: OutcomeCounts(item[1][1].sum(axis=0)).score)
    if len(screen.shared) < len(as_read):
        every = _images(evidence, pred, np.arange(len(as_read), dtype=np.int64))
        result = _scored(reading, evidence, every, as_read, thresholds)
        if result is None or not result[0].clear(_score(as_read)):
            return None
        gain, under = result
    totals = OutcomeCounts(as_read.sum(axis=0)), OutcomeCounts(under.sum(axis=0))
    return Rescored(reading, len(as_read), totals[0], totals[1], gain, len(found))
