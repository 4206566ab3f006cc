"""`sketches`: the boxes of every image the page draws small (issue 17 item 3).

The images are those listed under "where the work is", in `suspected_gt_errors` and in
`near_misses`; the sketches finisher (report/finishers/image_sketches.py) chooses them and draws their
boxes from the one extra pass over chosen images, so they are exact under any split into shards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AliasChoices, Field

from handler.engine.analyses.per_image import PER_IMAGE
from handler.engine.drawn_boxes import MAX_SKETCH_BOXES, ImageSketch, Sketched
from handler.report.findings.context import RunFacts
from handler.report.findings.fields import Count, OutcomeKey, Section
from handler.report.findings.sections import Figure, SectionSpec

if TYPE_CHECKING:
    from handler.report.findings.model import Findings

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
    return tuple(
        _model(s) for s in sorted(facts.finished(Sketched).images, key=lambda s: order.get(s.asset_id, -1))
    )


def sketch_figure(findings: Findings) -> dict[str, Any]:
    """The sketches by asset id, for the images the figure lists."""
    return {"sketch_of": {sketch.asset_id: sketch for sketch in findings.sketches}}


SketchesSection = Annotated[
    tuple[Sketch, ...],
    Field(
        description="The boxes of every image listed in images_with_most_work, suspected_gt_errors and "
        "near_misses (each once, in asset order), with their outcomes, to draw the image small."
    ),
    SectionSpec(sketches, figure=Figure("sketches", sketch_figure, place=30)),
]
