"""`near_misses`: false positives just below IOU_MIN that a lower Minimal IoU would have matched."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from handler.engine.analyses.near_misses import NEAR_MISSES
from handler.engine.evaluation import NEAR_MISS_FLOOR
from handler.report.context import RunFacts
from handler.report.fields import Count, Section
from handler.report.sections import SectionSpec


class NearMissBand(Section):
    iou_from: float
    iou_to: float
    count: Count


class NearMisses(Section):
    __doc__ = (
        f"False positives that overlap a missed GT box of their class with {NEAR_MISS_FLOOR:g} <= IoU < "
        "IOU_MIN, each counted once at its best such IoU."
    )

    count: Count
    missed_gt: Count = Field(description="Distinct missed GT boxes they overlap.")
    iou_min: float
    bands: tuple[NearMissBand, ...]


def near_misses(facts: RunFacts) -> NearMisses:
    found = facts.state.of(NEAR_MISSES)
    edges = found.edges.tolist()
    bands = tuple(
        NearMissBand(iou_from=low, iou_to=high, count=count)
        for low, high, count in zip(edges[:-1], edges[1:], found.counts.tolist(), strict=True)
    )
    return NearMisses(
        count=found.count, missed_gt=found.missed_gt, iou_min=facts.inputs.thresholds.iou_min, bands=bands
    )


NearMissesSection = Annotated[NearMisses, SectionSpec(near_misses, "near_misses")]
