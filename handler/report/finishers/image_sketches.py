"""The box sketches: every box of each image the page lists, from the one exact pass, and
`sketches.json`, the page's drawing data of them (kept out of the findings).

The images are those listed under "where the work is", in `suspected_gt_errors` and in
`near_misses`; the sketches feature (handler/features/sketches/) draws what this gives.
"""

from __future__ import annotations

from typing import Final

import orjson

from handler.engine.analyses.per_image import PER_IMAGE
from handler.engine.drawn_boxes import Sketched, image_sketch
from handler.features.gt_errors.section import suspects
from handler.features.near_misses.partial import NEAR_MISSES
from handler.features.sketches.section import Sketch
from handler.features.work.section import most_work_rows
from handler.report.finishing import FINDINGS, ExactPass, Finished, Finisher, Finishing, Merged
from handler.report.publish import ReportPart


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

SKETCHES_PART: Final = ReportPart("sketches", "sketches.json", "application/json")


def _sketches_json(finishing: Finishing) -> Finished:
    """Every sketch the page draws (its boxes with their outcomes, its picture), in asset order."""
    drawn = finishing.page.get("sketch_of")
    sketches = [
        sketch for sketch in (drawn.values() if isinstance(drawn, dict) else ()) if isinstance(sketch, Sketch)
    ]
    document = [sketch.model_dump(mode="json", by_alias=True) for sketch in sketches]
    return Finished({SKETCHES_PART: orjson.dumps(document)})


SKETCHES_JSON: Final = Finisher("sketches.json", FINDINGS, _sketches_json, (SKETCHES_PART,))
