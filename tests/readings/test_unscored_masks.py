"""A side's masks that are never scored (the other side has none) are not held by the run's sides,
while how the sides were read still names them."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from helpers.coco_masks import coco_pair

from handler.datasets import load_dataset
from handler.datasets.pairing import ScoreOn
from handler.datasets.read_options import ReadOptions
from handler.forked import meanwhile
from handler.readings.sides import ReadSides, read_sides
from handler.storage import open_source


def _sides(gt: Path, pred: Path, score_on: ScoreOn = "auto") -> ReadSides:
    gt_loaded = load_dataset(open_source(str(gt)))
    pred_loaded = load_dataset(open_source(str(pred)), None, gt_loaded)
    return read_sides(gt_loaded, ReadOptions("gt"), pred_loaded, ReadOptions("pred"), score_on)


def test_a_ground_truth_s_masks_against_boxes_are_named_but_not_kept() -> None:
    gt, _, boxes = coco_pair()
    sides = _sides(gt, boxes)
    assert sides.gt_names.masks and not sides.pred_names.masks
    assert sides.gt.boxes.masks is None
    assert sides.gt.parsed is not None and sides.gt.parsed.rows.masks is None


@pytest.mark.parametrize("score_on", ["auto", "masks"])
def test_masks_on_both_sides_are_kept_to_be_scored(score_on: ScoreOn) -> None:
    gt, masks, _ = coco_pair()
    sides = _sides(gt, masks, score_on)
    assert sides.gt_names.masks and sides.pred_names.masks
    assert sides.gt.boxes.has_masks and sides.pred.boxes.has_masks


@pytest.mark.parametrize("masks_scored", [True, False])
def test_work_waiting_runs_beside_the_masks_made_and_not_beside_boxes(masks_scored: bool) -> None:
    """The report's imports (`forked.meanwhile`) run on another thread while both sides' masks are
    read and drawn; a run scored on boxes makes none and leaves the work to its caller."""
    gt, masks, boxes = coco_pair()
    done: list[int] = []
    with meanwhile(lambda: done.append(threading.get_ident())):
        sides = _sides(gt, masks if masks_scored else boxes)
    assert sides.gt.boxes.has_masks is masks_scored
    assert len(done) == masks_scored and threading.get_ident() not in done
