"""The box sketches: every box of each image the page lists, from the one exact pass.

The images are those listed under "where the work is", in `suspected_gt_errors` and in
`near_misses`; the `sketches` section (report/findings/sections/sketches.py) shows what this gives.
"""

from __future__ import annotations

from typing import Final

from handler.engine.analyses.per_image import PER_IMAGE
from handler.engine.drawn_boxes import Sketched, image_sketch
from handler.features.gt_errors.section import suspects
from handler.features.near_misses.partial import NEAR_MISSES
from handler.features.work.section import most_work_rows
from handler.report.finishing import ExactPass, Finished, Finisher, Finishing, Merged


def listed_images(merged: Merged) -> frozenset[str]:
    """The images the page lists: most work, suspected GT errors, near misses."""
    state = merged.state
    asset_ids = state.of(PER_IMAGE).asset_ids
    found = {asset_ids[row] for row in most_work_rows(state, merged.costs).tolist()}
    found |= {box.asset_id for box in suspects(state, merged.reading is not None).listed}
    found |= {pair.asset_id for pair in state.of(NEAR_MISSES).pairs}
    return frozenset(found)


def _sketches(finishing: Finishing) -> Finished:
    drawn = tuple(
        image_sketch(
            passed.evaluation,
            image,
            passed.paired.asset_ids[image],
            passed.paired.class_names,
            (
                float(passed.paired.widths[image]),
                float(passed.paired.heights[image]),
                passed.paired.normalized,
            ),
        )
        for passed, image in finishing.images.images(finishing.chosen)
    )
    return Finished(data=Sketched(drawn))


SKETCHES: Final = Finisher("sketches", ExactPass(listed_images), _sketches)
