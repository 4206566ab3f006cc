"""`near_misses`: false positives just below IOU_MIN that a lower Minimal IoU would have matched."""

from __future__ import annotations

from typing import Annotated

from pydantic import AliasChoices, Field

from handler.engine.analyses.near_misses import NEAR_MISSES, TOP_NEAR_MISSES
from handler.engine.evaluation import NEAR_MISS_FLOOR
from handler.sections.context import RunFacts
from handler.sections.fields import Count, Section
from handler.sections.shown import Shown


class NearMissBand(Section):
    iou_from: float
    iou_to: float
    count: Count


class NearMissEntry(Section):
    asset_id: str
    class_name: str = Field(serialization_alias="class", validation_alias=AliasChoices("class", "class_name"))
    iou: float = Field(ge=0, le=1)
    gt_box: tuple[float, float, float, float] = Field(
        description="The missed GT box, [x_min, y_min, x_max, y_max] (before turning by `gt_angle`)."
    )
    pred_box: tuple[float, float, float, float] = Field(description="The false positive on it.")
    gt_angle: float = Field(description="Degrees clockwise about the GT box's centre; 0: axis-aligned.")
    pred_angle: float = Field(description="The same, of the false positive.")


class NearMisses(Section):
    __doc__ = (
        f"False positives that overlap a missed GT box of their class with {NEAR_MISS_FLOOR:g} <= IoU < "
        "IOU_MIN, each counted once at its best such IoU."
    )

    count: Count
    missed_gt: Count = Field(description="Distinct missed GT boxes they overlap.")
    bands: tuple[NearMissBand, ...]
    listed: tuple[NearMissEntry, ...] = Field(
        max_length=TOP_NEAR_MISSES, description="The closest ones (highest IoU first), each at its best pair."
    )


def near_misses(facts: RunFacts) -> NearMisses:
    found = facts.state.of(NEAR_MISSES)
    counts = found.counts
    edges = counts.edges.tolist()
    bands = tuple(
        NearMissBand(iou_from=low, iou_to=high, count=count)
        for low, high, count in zip(edges[:-1], edges[1:], counts.counts.tolist(), strict=True)
    )
    listed = tuple(
        NearMissEntry(
            asset_id=pair.asset_id,
            class_name=pair.class_name,
            iou=pair.iou,
            gt_box=pair.gt_box,
            pred_box=pair.pred_box,
            gt_angle=pair.gt_angle,
            pred_angle=pair.pred_angle,
        )
        for pair in found.pairs
    )
    return NearMisses(
        count=counts.count,
        missed_gt=counts.missed_gt,
        bands=bands,
        listed=listed,
    )


NearMissesSection = Annotated[NearMisses, Shown(near_misses)]
