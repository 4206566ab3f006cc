"""`suspected_gt_errors`: confident predictions that contradict the GT."""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import Field

from handler.engine.gt_errors import (
    MISSING_GT,
    MISSING_MAX_IOU,
    SUSPECT_CONFIDENCE,
    TOP_SUSPECTS,
    WRONG_CLASS,
)
from handler.engine.listed import suspects
from handler.sections.context import RunFacts
from handler.sections.fields import Count, Score, Section, Threshold
from handler.sections.shown import Shown


class SuspectedBoxEntry(Section):
    asset_id: str
    box: tuple[float, float, float, float] = Field(
        description="The prediction's [x_min, y_min, x_max, y_max] (before turning by `angle`)."
    )
    angle: float = Field(description="Degrees clockwise about the box's centre; 0: an axis-aligned box.")
    kind: Literal["missing_gt", "wrong_class"]
    confidence: Threshold
    iou: Score | None = Field(description="IoU with the matched GT box; null for missing_gt.")
    pred_class: str
    gt_class: str | None


class SuspectedGtErrors(Section):
    __doc__ = (
        f"Predictions with confidence >= {SUSPECT_CONFIDENCE:g} that contradict the GT: missing_gt, a false "
        f"positive no GT box of any class overlaps with IoU >= {MISSING_MAX_IOU:g}; wrong_class, a "
        "class-confused match with IoU >= IOU_PERFECT. Flagged in the ledger (suspected_gt_error)."
    )

    confidence_from: Threshold
    count: Count
    missing_gt: Count
    wrong_class: Count
    listed: tuple[SuspectedBoxEntry, ...] = Field(
        max_length=TOP_SUSPECTS, description="The most confident suspects, most confident first."
    )
    withheld: str | None = Field(
        default=None,
        description="Why no suspect is listed (another reading of the predictions explains the misses).",
    )


# While another reading explains the misses, the GT is not blamed for them.
WITHHELD: Final = (
    "not listed: another reading of the predictions scores clearly better (see the warning under the "
    "verdict), so their misses are the export's, not the ground truth's; the ledger flags none either"
)


def suspected_gt_errors(facts: RunFacts) -> SuspectedGtErrors:
    found = suspects(facts.state, facts.reading is not None)
    listed = tuple(
        SuspectedBoxEntry.model_validate(
            {
                "asset_id": box.asset_id,
                "box": box.box,
                "angle": box.angle,
                "kind": box.kind,
                "confidence": box.confidence,
                "iou": box.iou,
                "pred_class": box.pred_class,
                "gt_class": box.gt_class,
            }
        )
        for box in found.listed
    )
    return SuspectedGtErrors(
        confidence_from=SUSPECT_CONFIDENCE,
        count=found.count,
        missing_gt=int(found.counts[MISSING_GT]),
        wrong_class=int(found.counts[WRONG_CLASS]),
        listed=listed,
        withheld=None if facts.reading is None else WITHHELD,
    )


SuspectedGtErrorsSection = Annotated[SuspectedGtErrors, Shown(suspected_gt_errors)]
