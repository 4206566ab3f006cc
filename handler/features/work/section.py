"""Where the work is: `images_with_most_work` and `by_size` (one page fragment, `work`)."""

from __future__ import annotations

from typing import Annotated, Final

import numpy as np
from pydantic import Field

from handler.engine.listed import TOP_IMAGES, listed_rows
from handler.features.work.partial import BY_SIZE, SIZE_BOUNDS, SIZE_NAMES
from handler.sections.context import RunFacts
from handler.sections.fields import (
    Count,
    Counts,
    Score,
    Seconds,
    Section,
    SizeName,
    outcome_counts,
    scored_rows,
)
from handler.sections.shown import Shown

NO_SIZES: Final = (
    "Box sizes are not shown: the boxes are in normalised coordinates and the image sizes are not "
    "known, so their areas in pixels are not either."
)


class ImageWork(Section):
    """One image of the review queue (review_queue), in its place."""

    rank: int = Field(ge=1, description="The image's place in the review queue (review_queue.csv).")
    asset_id: str
    labeler_seconds: Seconds
    counts: Counts
    uncertain_boxes: Count = Field(
        description="Its kept predictions of uncertain confidence (review_queue.confidence_bins)."
    )


class SizeRow(Section):
    size: SizeName
    counts: Counts
    assistance_score: Score


def work_values(findings: object) -> dict[str, str]:
    """The size bands the work fragment names."""
    return {"size_bounds": size_bounds_text()}


def size_bounds_text() -> str:
    """`small < 32², medium < 96², large`, from the engine's bounds (areas in pixels²)."""
    small, medium = (f"{bound**0.5:g}²" for bound in SIZE_BOUNDS)
    return f"small < {small}, medium < {medium}, large"


class BySize(Section):
    __doc__ = (
        f"Outcomes by GT box area in pixels ({size_bounds_text()}); a false positive by its own box's area."
    )

    available: bool
    note: str | None = Field(description="Why the sizes are not available; null when they are.")
    sizes: tuple[SizeRow, ...]


def images_with_most_work(facts: RunFacts) -> tuple[ImageWork, ...]:
    """The first rows of the review queue: the images that take the labeler longest with the
    predictions, by estimated seconds (those with any)."""
    queue = facts.queue
    return tuple(
        ImageWork(
            rank=rank,
            asset_id=queue.asset_ids[row],
            labeler_seconds=float(queue.seconds[row]),
            counts=outcome_counts(queue.counts[row]),
            uncertain_boxes=int(queue.uncertain[row]),
        )
        for rank, row in enumerate(listed_rows(queue).tolist(), start=1)
    )


def by_size(facts: RunFacts) -> BySize:
    sizes = facts.state.of(BY_SIZE).counts
    if sizes is None:
        return BySize(available=False, note=NO_SIZES, sizes=())
    rows = scored_rows(sizes, np.arange(len(SIZE_NAMES)))
    # model_validate: the engine's size names are plain strings, the model checks them against SizeName.
    sizes_rows = tuple(SizeRow.model_validate({"size": SIZE_NAMES[row], **figures}) for row, figures in rows)
    return BySize(available=True, note=None, sizes=sizes_rows)


ImagesWithMostWorkSection = Annotated[
    tuple[ImageWork, ...],
    Field(
        max_length=TOP_IMAGES, description="The images with the most estimated labeler time left, most first."
    ),
    Shown(images_with_most_work, "work", draw=work_values),
]
# Shown in the work fragment.
BySizeSection = Annotated[BySize, Shown(by_size)]
