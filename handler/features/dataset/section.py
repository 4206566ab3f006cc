"""The dataset figures: what was scored (images, boxes before and after the confidence filter,
images on one side only) and the boxes skipped (defective, or on an image too crowded to match),
each listed with its reason."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from handler.sections.fields import Count, Section
from handler.sections.shown import Shown


class DatasetFigures(Section):
    images: Count = Field(description="Assets present in both datasets (scored).")
    gt_objects: Count
    predictions: Count = Field(description="Before the confidence filter.")
    predictions_kept: Count = Field(description="After the confidence filter.")
    gt_only_images: Count
    pred_only_images: Count
    gt_source: str
    pred_source: str
    gt_read_as: tuple[str, ...] = Field(
        min_length=1,
        description="How the GT was read, part by part, each with where it came from (the format's, "
        "detected, given), its format first; a reading proposed instead is in `other_reading`.",
    )
    pred_read_as: tuple[str, ...] = Field(min_length=1, description="The same for the predictions.")
    classes: Count
    crowd_excluded: Count

    @property
    def gt_format(self) -> str:
        """The format the GT was read in: the first part of its reading."""
        return self.gt_read_as[0]

    @property
    def pred_format(self) -> str:
        return self.pred_read_as[0]


class SkippedBoxEntry(Section):
    source: str
    position: str
    problem: str


class Skipped(Section):
    count: Count
    listed: tuple[SkippedBoxEntry, ...]


DatasetSection = Annotated[DatasetFigures, Shown(feature="dataset", always=True)]
