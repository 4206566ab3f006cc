"""The sketches' finishers: every box of each image the page lists, from the one exact pass; the
pictures behind them; and `sketches.json`, the page's drawing data of them (kept out of the findings).

The images are those listed under "where the work is", in `suspected_gt_errors` and in
`near_misses` (handler/engine/listed.py); the section beside this module draws what these give.
The pictures are read where the IMAGES input says (checked by the pipeline before the datasets are
read), else in the folder the GT's format names beside its labels: a phase of its own, "draw
images", so their time is not the evaluation's.
"""

from __future__ import annotations

from typing import Final

from pydantic import TypeAdapter

from handler.engine.analyses.near_misses import NEAR_MISSES
from handler.engine.analyses.per_image import PER_IMAGE
from handler.engine.drawn_boxes import Sketched, ToSketch, image_sketches
from handler.engine.listed import most_work_rows, suspects
from handler.features.sketches.section import Sketch
from handler.images.pictures import DRAW_IMAGES, draw_pictures
from handler.images.source import found_root, given_root
from handler.inputs import IMAGES_KEY
from handler.sections.finishing import (
    FINDINGS,
    MERGED,
    ExactPass,
    Finished,
    Finisher,
    Finishing,
    Merged,
)
from handler.sections.parts import ReportPart


def listed_images(merged: Merged) -> frozenset[str]:
    """The images the page lists: most work, suspected GT errors, near misses."""
    return _listed(merged, withheld=merged.reading is not None)


def _sketched_images(merged: Merged) -> frozenset[str]:
    """The listed images and the suspected GT errors' whether or not another reading withholds
    them: chosen before the search for other readings ends, so the pass runs beside it (a
    withheld suspect's sketch is left out once the reading is known: `_sketches`)."""
    return _listed(merged, withheld=False)


def _listed(merged: Merged, withheld: bool) -> frozenset[str]:
    state = merged.state
    asset_ids = state.of(PER_IMAGE).asset_ids
    found = {asset_ids[row] for row in most_work_rows(state, merged.costs).tolist()}
    found |= {box.asset_id for box in suspects(state, withheld).listed}
    found |= {pair.asset_id for pair in state.of(NEAR_MISSES).pairs}
    return frozenset(found)


def _sketches(finishing: Finishing) -> Finished:
    """The chosen images sketched together; then, once the search beside is done, those whose
    only cause was a suspect that a found reading withholds left out."""
    wanted = [
        ToSketch(
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
    ]
    drawn = image_sketches(wanted)
    listed = listed_images(finishing.merged)
    return Finished(data=Sketched(tuple(sketch for sketch in drawn if sketch.asset_id in listed)))


SKETCHES: Final = Finisher("sketches", ExactPass(_sketched_images), _sketches)


def _pictures(finishing: Finishing) -> Finished:
    merged = finishing.merged
    listed = sorted(listed_images(merged))
    given = merged.inputs.images
    root = given_root(given, IMAGES_KEY) if given else found_root(merged.gt.source, merged.gt.format, listed)
    return Finished(data=None if root is None else draw_pictures(root, listed))


PICTURES: Final = Finisher("pictures", MERGED, _pictures, phase=DRAW_IMAGES)

SKETCHES_PART: Final = ReportPart("sketches", "sketches.json", "application/json")


def _sketches_json(finishing: Finishing) -> Finished:
    """Every sketch the page draws (its boxes with their outcomes, its picture), in asset order."""
    drawn = finishing.page.get("sketch_of")
    sketches = [
        sketch for sketch in (drawn.values() if isinstance(drawn, dict) else ()) if isinstance(sketch, Sketch)
    ]
    # pydantic writes the JSON itself: no dictionaries made first, the outlines' numbers in one pass.
    return Finished({SKETCHES_PART: TypeAdapter(list[Sketch]).dump_json(sketches, by_alias=True)})


SKETCHES_JSON: Final = Finisher("sketches.json", FINDINGS, _sketches_json, (SKETCHES_PART,))
