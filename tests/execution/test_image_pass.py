"""The extra pass gives exactly the full run's view of each chosen image, whether the shard's
boxes are in image order (found by bisection) or interleaved (one pass over the images)."""

from __future__ import annotations

import numpy as np
from helpers.cases import THRESHOLDS, grid_tables
from hypothesis import given, settings
from hypothesis import strategies as st

from handler.boxes import BoxTable, Dataset
from handler.datasets import pair_datasets
from handler.engine import evaluate
from handler.engine.drawn_boxes import ToSketch, image_sketches
from handler.execution.image_pass import ImagePass, passed_shard


def _dataset(boxes: BoxTable, n_images: int) -> Dataset:
    return Dataset(
        source="mem",
        format="native",
        asset_ids=[f"img{i}" for i in range(n_images)],
        class_names=["car", "dog"],
        boxes=boxes,
        widths=np.full(n_images, 100.0),
        heights=np.full(n_images, 100.0),
    )


def _in_image_order(boxes: BoxTable) -> BoxTable:
    return boxes[np.argsort(boxes.image, kind="stable")]


@settings(max_examples=100, deadline=None, derandomize=True)
@given(grid_tables(), st.booleans(), st.sets(st.integers(0, 4)))
def test_each_chosen_image_is_the_full_runs_view_of_it(
    tables: tuple[BoxTable, BoxTable, int], ordered: bool, drawn: set[int]
) -> None:
    gt, pred, n_images = tables
    if ordered:
        gt, pred = _in_image_order(gt), _in_image_order(pred)
    paired = pair_datasets(_dataset(gt, n_images), _dataset(pred, n_images))
    wanted = frozenset({f"img{i}" for i in drawn} | {"not-an-asset"})
    full = evaluate(paired.gt, paired.pred, len(paired.asset_ids), THRESHOLDS)
    expected = image_sketches(
        [
            ToSketch(full, row, asset_id, paired.class_names, (100.0, 100.0, paired.normalized))
            for row, asset_id in enumerate(paired.asset_ids)
            if asset_id in wanted
        ]
    )
    passed = ImagePass((passed_shard(0, paired, THRESHOLDS, wanted),))
    seen = image_sketches(
        [
            ToSketch(
                p.evaluation, image, p.paired.asset_ids[image], p.paired.class_names, (100.0, 100.0, False)
            )
            for p, image in passed.images(wanted)
        ]
    )
    assert seen == expected
    assert [p.paired.asset_ids[image] for p, image in passed.images(wanted)] == [
        asset_id for asset_id in paired.asset_ids if asset_id in wanted
    ]
