"""`compare` on masks: two mask runs are compared on mask IoU (their transitions too, each GT
object's outcome under A and B against pycocotools' oracle), and a mask run against a box run is
compared on boxes with one line saying so."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pycocotools.mask as coco_mask
from helpers import reference as ref
from helpers.coco_masks import coco_pair, oracle

from handler import compare
from handler.engine.outcomes import Outcome
from handler.engine.transitions import GT_OUTCOMES

INPUTS = {"IOU_MIN": "0.3", "IOU_PERFECT": "0.8", "CONFIDENCE_THRESHOLD": "0.5"}


def _boxed_every_third(results_path: Path, out: Path) -> Path:
    """The mask results with every third mask replaced by the rectangle of its extent."""
    results: list[dict[str, Any]] = json.loads(results_path.read_text())
    for result in results[::3]:
        rle = result["segmentation"]
        rectangle = coco_mask.frPyObjects(coco_mask.toBbox([rle]), *rle["size"])[0]
        result["segmentation"] = {"size": rle["size"], "counts": rectangle["counts"].decode()}
    out.write_text(json.dumps(results))
    return out


def _transitions(a: ref.Evaluation, b: ref.Evaluation) -> list[list[int]]:
    """The oracle's GT objects by outcome under A (row) and B (column)."""
    moved = Counter(
        (outcome_a, outcome_b)
        for image_a, image_b in zip(a.images, b.images, strict=True)
        for outcome_a, outcome_b in zip(image_a.gt_outcomes, image_b.gt_outcomes, strict=True)
    )
    names = [Outcome(o).key for o in GT_OUTCOMES]
    return [[moved[(row, column)] for column in names] for row in names]


def test_two_mask_runs_are_compared_on_mask_iou_object_by_object(tmp_path: Path) -> None:
    gt, masks, _ = coco_pair()
    boxed = _boxed_every_third(masks, tmp_path / "boxed_masks.json")
    found = compare(str(gt), str(masks), str(boxed), inputs=INPUTS)
    assert found.scored_on == "masks" and found.scored_on_note is None
    expected_a, expected_b = oracle(gt, masks), oracle(gt, boxed)
    assert found.context.a.assistance_score == float(expected_a.score)
    assert found.context.b.assistance_score == float(expected_b.score)
    assert [list(row) for row in found.transitions.counts] == _transitions(expected_a, expected_b)
    assert found.transitions.worse > 0 and found.better == "A"


def test_a_mask_run_against_a_box_run_is_compared_on_boxes_and_says_so(tmp_path: Path) -> None:
    gt, masks, boxes = coco_pair()
    found = compare(str(gt), str(masks), str(boxes), inputs=INPUTS)
    assert found.scored_on == "boxes"
    assert found.scored_on_note is not None and found.scored_on_note.startswith("A carries instance masks")
    on_boxes = compare(str(gt), str(masks), str(boxes), inputs={**INPUTS, "SCORE_ON": "boxes"})
    assert on_boxes.scored_on_note is None
    assert found.difference == on_boxes.difference and found.transitions == on_boxes.transitions
