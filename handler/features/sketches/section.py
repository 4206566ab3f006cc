"""The sketches: the boxes of every image the page draws small (drawing data of the page, not findings:
the findings keep `pictures`, where the images behind them came from).

The images are those listed under "where the work is", in `suspected_gt_errors` and in
`near_misses`; the sketches finisher (finisher.py beside this module) chooses them and draws their
boxes from the one extra pass over chosen images, so they are exact under any split into shards.
"""

from __future__ import annotations

import base64
from typing import Annotated, Any, Final, Literal

import numpy as np
from pydantic import AliasChoices, Field

from handler.engine.analyses.per_image import PER_IMAGE
from handler.engine.drawn_boxes import MAX_SKETCH_BOXES, ImageSketch, Sketched
from handler.engine.review import ReviewQueue
from handler.images.pictures import Picture, Pictures
from handler.images.thumbnail import Thumbnail
from handler.sections.context import RunFacts
from handler.sections.fields import Count, OutcomeKey, Section
from handler.sections.shown import Shown

BoxSide = Literal["gt", "pred"]


class SketchBox(Section):
    side: BoxSide
    box: tuple[float, float, float, float] = Field(
        description="[x_min, y_min, x_max, y_max], as in the dataset (before turning by `angle`)."
    )
    angle: float = Field(description="Degrees clockwise about the box's centre; 0: an axis-aligned box.")
    class_name: str = Field(serialization_alias="class", validation_alias=AliasChoices("class", "class_name"))
    outcome: OutcomeKey
    confidence: float | None = Field(description="A prediction's confidence; null for a ground-truth box.")
    uncertain: bool = Field(
        description="A prediction whose confidence is in an uncertain bin (review_queue.confidence_bins)."
    )
    outline: tuple[tuple[float, ...], ...] = Field(
        default=(),
        description="When the run scored masks, the object's mask outline: closed loops (holes and "
        "parts too), each its points flat, x0 y0 x1 y1 …, in the box's units, simplified to a few "
        "dozen points; for a quadrilateral of an image of unknown size (four corners in 0-1, scored "
        "as written), its four corners; empty for a box.",
    )


class SketchImage(Section):
    """The image behind a sketch, when the run had images (`--images`, or found beside the labels)."""

    source: str = Field(description="The image file read, or the folder it was looked for in.")
    jpeg: str | None = Field(
        description="The image scaled down (long side at most 300 px), a JPEG data URI; null when not drawn."
    )
    width: Count | None = Field(description="The image's own size in pixels, upright; null when not read.")
    height: Count | None
    note: str | None = Field(
        description="Why it is not drawn (not found, not an image, too large), or a "
        "mismatch worth knowing (its size is not the dataset's); null when there is nothing to say."
    )


class Sketch(Section):
    asset_id: str
    width: float = Field(
        gt=0, description="The frame in the boxes' units: the image's size, 1 when normalised."
    )
    height: float = Field(gt=0)
    aspect: float = Field(gt=0, description="The image's height / width as drawn.")
    boxes: tuple[SketchBox, ...] = Field(max_length=MAX_SKETCH_BOXES)
    left_out: Count = Field(description=f"Boxes beyond {MAX_SKETCH_BOXES}, not drawn.")
    image: SketchImage | None = Field(
        description="The image under the boxes; null when the run had no images."
    )


class PicturesUsed(Section):
    """Where the sketches' images came from, and how many were drawn."""

    root: str = Field(description="The folder or s3:// prefix the images were looked for in.")
    found_by: str = Field(description="`given` (--images, IMAGES), or the labels it was found beside.")
    drawn: Count
    not_drawn: Count = Field(
        description="Sketched images without a picture: each sketch's image.note says why."
    )
    note: str | None = Field(description="Why no image could be drawn at all (e.g. Pillow is not installed).")


# A picture whose aspect is off the dataset's frame by more than this is noted (drawn stretched).
ASPECT_TOLERANCE: Final = 0.02


def _frame(sketch: ImageSketch, thumbnail: Thumbnail | None) -> tuple[float, float, float, str | None]:
    """(width, height, aspect, note): the picture's size where the dataset gave none, its aspect for
    normalised boxes; a note when the dataset's size has another aspect than the picture's."""
    if thumbnail is None:
        return sketch.width, sketch.height, sketch.aspect, None
    aspect = thumbnail.height / thumbnail.width
    if not sketch.sized:
        width, height = (1.0, 1.0) if sketch.normalized else (float(thumbnail.width), float(thumbnail.height))
        return width, height, aspect, None
    if abs(aspect / sketch.aspect - 1) <= ASPECT_TOLERANCE:
        return sketch.width, sketch.height, sketch.aspect, None
    said = f"aspect {sketch.aspect:.3g}" if sketch.normalized else f"{sketch.width:g}x{sketch.height:g}"
    note = f"{thumbnail.width}x{thumbnail.height} where the dataset says {said}: drawn stretched"
    return sketch.width, sketch.height, sketch.aspect, note


def _image(picture: Picture, note: str | None) -> dict[str, object]:
    small = picture.thumbnail
    return {
        "source": picture.where,
        "jpeg": None if small is None else "data:image/jpeg;base64," + base64.b64encode(small.jpeg).decode(),
        "width": None if small is None else small.width,
        "height": None if small is None else small.height,
        "note": picture.note or note,
    }


def _model(sketch: ImageSketch, picture: Picture | None, queue: ReviewQueue) -> Sketch:
    width, height, aspect, note = _frame(sketch, picture.thumbnail if picture else None)
    confidence = np.array([np.nan if b.confidence is None else b.confidence for b in sketch.boxes])
    uncertain = (queue.uncertain_at(confidence) & ~np.isnan(confidence)).tolist()
    return Sketch.model_validate(
        {
            "asset_id": sketch.asset_id,
            "width": width,
            "height": height,
            "aspect": aspect,
            "boxes": [
                {
                    "side": b.side,
                    "box": b.box,
                    "angle": b.angle,
                    "class_name": b.class_name,
                    "outcome": b.outcome,
                    "confidence": b.confidence,
                    "uncertain": flagged,
                    "outline": b.outline,
                }
                for b, flagged in zip(sketch.boxes, uncertain, strict=True)
            ],
            "left_out": sketch.left_out,
            "image": None if picture is None else _image(picture, note),
        }
    )


def sketches(facts: RunFacts) -> tuple[Sketch, ...]:
    """One sketch per listed image, in asset order."""
    order = {asset_id: row for row, asset_id in enumerate(facts.state.of(PER_IMAGE).asset_ids)}
    drawn = sorted(facts.finished(Sketched).images, key=lambda s: order.get(s.asset_id, -1))
    pictures = facts.finished(Pictures)
    if not pictures.root:
        return tuple(_model(s, None, facts.queue) for s in drawn)
    nowhere = Picture(pictures.root, note=pictures.note)
    return tuple(_model(s, pictures.by_asset.get(s.asset_id, nowhere), facts.queue) for s in drawn)


def pictures_used(facts: RunFacts) -> PicturesUsed | None:
    pictures = facts.finished(Pictures)
    if not pictures.root:
        return None
    drawn = sum(picture.thumbnail is not None for picture in pictures.by_asset.values())
    return PicturesUsed(
        root=pictures.root,
        found_by=pictures.found_by,
        drawn=drawn,
        not_drawn=len(facts.finished(Sketched).images) - drawn,
        note=pictures.note,
    )


def sketch_values(facts: RunFacts) -> dict[str, Any]:
    """The sketches by asset id, for the images the figure lists: drawing data of the page only."""
    return {"sketch_of": {sketch.asset_id: sketch for sketch in sketches(facts)}}


PicturesSection = Annotated[
    PicturesUsed | None,
    Field(description="Where the images behind the sketches came from; null when the run had none."),
    Shown(pictures_used, "sketches", page=sketch_values),
]
