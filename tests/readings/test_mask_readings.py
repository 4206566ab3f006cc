"""Masks written another way: RLE runs counted row by row, polygon points normalised or in percent,
on either side or both, are read right, named with the score under the reading, and applied by
their option; transposing runs agrees with pycocotools."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import numpy as np
import orjson
import pytest
from helpers import mixups
from helpers.coco_masks import from_strings
from helpers.paths import THIRD_PARTY
from pycocotools import mask as coco_mask

from handler.boxes import MaskRuns, Masks, UnmadeMasks
from handler.datasets import pairing
from handler.engine.masks import made, transposed
from handler.execution import ExecutionOptions, evaluate_plan, read_and_plan
from handler.features import ANALYSES
from handler.inputs import parse_inputs
from handler.readings import rescore
from handler.storage.local import LocalStore

COCO: Final = THIRD_PARTY / "coco_val2014_100"
GT: Final = COCO / "instances_val2014_100.json"
SEGM: Final = COCO / "instances_val2014_fakesegm100_results.json"
# The mistakes (the predictions', the GT's), and the readings that undo them.
MISTAKES: Final = {
    "runs row by row": ([mixups.rle_row_major], None, {"PRED_MASK": "row-major"}),
    "GT polygons normalised": ([], 1.0, {"GT_MASK": "normalized"}),
    "GT polygons in percent": ([], 100.0, {"GT_MASK": "percent"}),
    "runs row by row and GT polygons normalised": (
        [mixups.rle_row_major],
        1.0,
        {"PRED_MASK": "row-major", "GT_MASK": "normalized"},
    ),
    "runs row by row and scores in percent": (
        [mixups.rle_row_major, mixups.rescored(100)],
        None,
        {"PRED_MASK": "row-major", "PRED_SCORE": "scale 100"},
    ),
}


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> mixups.Weighed:
    weighed = mixups.weigh(GT, SEGM, tmp_path_factory.mktemp("clean") / "store")
    assert weighed.found is None
    return weighed


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_a_mask_written_another_way_is_read_right_with_the_clean_score(
    tmp_path: Path, mistake: str, clean: mixups.Weighed
) -> None:
    edits, gt_scale, options = MISTAKES[mistake]
    gt = GT
    if gt_scale is not None:
        gt = tmp_path / "gt.json"
        gt.write_bytes(orjson.dumps(mixups.gt_polygons_in(gt_scale)(orjson.loads(GT.read_bytes()))))
    pred = mixups.write_mistake(GT, SEGM, edits, tmp_path / "pred.json")
    weighed = mixups.weigh(gt, pred, tmp_path / "store")
    found = weighed.found
    assert found is not None, "no reading proposed"
    assert {part.key: part.value for part in found.reading.parts} == options
    assert weighed.score < clean.score - 0.2
    assert found.under.score == pytest.approx(clean.score, abs=1e-9)
    applied = mixups.weigh(gt, pred, tmp_path / "store", **options)
    assert applied.score == pytest.approx(clean.score, abs=1e-9) and applied.found is None


def test_runs_transposed_are_pycocotools_masks_transposed() -> None:
    """The real results' RLE, transposed, equal pycocotools' encoding of the decoded masks' transpose."""
    results = orjson.loads(SEGM.read_bytes())[:60]
    strings = [r["segmentation"]["counts"].encode() for r in results]
    height = np.array([r["segmentation"]["size"][0] for r in results])
    width = np.array([r["segmentation"]["size"][1] for r in results])
    runs, _ = from_strings(strings, height, width)
    found = transposed(runs)
    for row, result in enumerate(results):
        expected = coco_mask.encode(np.asfortranarray(coco_mask.decode(result["segmentation"]).T))
        mine = found[[row]]
        assert (int(mine.height[0]), int(mine.width[0])) == tuple(expected["size"])
        assert coco_mask.decode(expected).sum() == coco_mask.decode(result["segmentation"]).sum()
        ours = {"size": expected["size"], "counts": mine.counts.tolist()}
        frpy = coco_mask.frPyObjects(ours, *expected["size"])
        assert np.array_equal(coco_mask.decode(frpy), coco_mask.decode(expected))


def test_the_search_draws_the_probe_s_polygons_once_for_every_candidate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scores in percent on the mask pair: the scale is scored on the probe (every image here),
    whose GT polygons are drawn once for every candidate, not again for the crowding as read
    (counted on boxes)."""
    pred = mixups.write_mistake(GT, SEGM, [mixups.rescored(100)], tmp_path / "percent.json")
    inputs = parse_inputs({"GT_DATASET": str(GT), "PRED_DATASET": str(pred)})
    plan = read_and_plan(inputs, LocalStore(tmp_path / "store"), ExecutionOptions(workers=1), ANALYSES)
    state = evaluate_plan(plan, None).state
    drawn: list[int] = []

    def counted(masks: Masks) -> MaskRuns:  # the real rasterisation, its polygon rows counted
        if isinstance(masks, UnmadeMasks) and masks.drawn.any():
            drawn.append(int(np.count_nonzero(masks.drawn)))
        return made(masks)

    for module in (rescore, pairing):
        monkeypatch.setattr(module, "made", counted)
    assert plan.sides is not None
    found = plan.sides.best_reading(state, inputs.thresholds)

    assert found is not None and found.under.score > found.as_read.score
    assert len(drawn) == 1, drawn
