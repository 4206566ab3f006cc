"""`sketches`: the boxes of every image the page draws small (issue 17 item 3).

The images are those listed under "where the work is", in `suspected_gt_errors` and in
`near_misses`; their boxes come from a second pass over those images only
(handler/execution/sketches.py), so they are exact under any split into shards.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import AliasChoices, Field

from handler.engine.analyses.near_miss_pairs import NEAR_MISS_PAIRS
from handler.engine.analyses.per_image import PER_IMAGE
from handler.engine.drawn_boxes import MAX_SKETCH_BOXES, ImageSketch
from handler.engine.state import EvaluationState
from handler.engine.timecost import TimeCosts
from handler.report.context import RunFacts
from handler.report.fields import Count, OutcomeKey, Section
from handler.report.sections import SectionSpec
from handler.report.sections.gt_errors import suspects
from handler.report.sections.work import most_work_rows

BoxSide = Literal["gt", "pred"]


class SketchBox(Section):
    side: BoxSide
    box: tuple[float, float, float, float] = Field(
        description="[x_min, y_min, x_max, y_max], as in the dataset."
    )
    class_name: str = Field(serialization_alias="class", validation_alias=AliasChoices("class", "class_name"))
    outcome: OutcomeKey


class Sketch(Section):
    asset_id: str
    width: float = Field(
        gt=0, description="The frame in the boxes' units: the image's size, 1 when normalised."
    )
    height: float = Field(gt=0)
    aspect: float = Field(gt=0, description="The image's height / width as drawn.")
    boxes: tuple[SketchBox, ...] = Field(max_length=MAX_SKETCH_BOXES)
    left_out: Count = Field(description=f"Boxes beyond {MAX_SKETCH_BOXES}, not drawn.")


@dataclass(frozen=True)
class SketchTargets:
    """The asset ids to sketch, and the shards that hold them."""

    assets: frozenset[str]
    shards: frozenset[int]


def sketch_targets(state: EvaluationState, costs: TimeCosts) -> SketchTargets:
    """The images the page lists: most work, suspected GT errors, near misses."""
    images = state.of(PER_IMAGE)
    shard_of = [block.shard for block in images.blocks for _ in block.asset_ids]
    asset_ids = images.asset_ids
    found = {(asset_ids[row], shard_of[row]) for row in most_work_rows(state, costs).tolist()}
    found |= {(box.asset_id, box.shard) for box in suspects(state).listed}
    found |= {(pair.asset_id, pair.shard) for pair in state.of(NEAR_MISS_PAIRS)}
    return SketchTargets(frozenset(a for a, _ in found), frozenset(s for _, s in found))


def _model(sketch: ImageSketch) -> Sketch:
    return Sketch.model_validate(
        {
            "asset_id": sketch.asset_id,
            "width": sketch.width,
            "height": sketch.height,
            "aspect": sketch.aspect,
            "boxes": [
                {"side": b.side, "box": b.box, "class_name": b.class_name, "outcome": b.outcome}
                for b in sketch.boxes
            ],
            "left_out": sketch.left_out,
        }
    )


def sketches(facts: RunFacts) -> tuple[Sketch, ...]:
    """One sketch per listed image, in asset order."""
    order = {asset_id: row for row, asset_id in enumerate(facts.state.of(PER_IMAGE).asset_ids)}
    return tuple(_model(s) for s in sorted(facts.sketches, key=lambda s: order.get(s.asset_id, -1)))


SketchesSection = Annotated[
    tuple[Sketch, ...],
    Field(
        description="The boxes of every image listed in images_with_most_work, suspected_gt_errors and "
        "near_misses (each once, in asset order), with their outcomes, to draw the image small."
    ),
    SectionSpec(sketches),
]
