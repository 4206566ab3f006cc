"""The findings document (kind `dataset_intelligence_findings_v1`) as typed, frozen models.

The run-level parts are here; each analysis section is one module in handler/report/sections/
(its models, builder and page fragment), registered by one typed field of `Findings`.
`schemas/findings.schema.json` is generated from these models (`python -m handler.report.schema
--write`), so the two cannot drift.
"""

from __future__ import annotations

from typing import Final, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from handler.report.fields import Count, Section, Threshold

# Re-exported: the CLI and EfficiencyResult read these from here.
from handler.report.fields import Counts as Counts
from handler.report.fields import Grade as Grade
from handler.report.fields import Score as Score
from handler.report.fields import Shares as Shares
from handler.report.sections.actions import ActionsSection, ConfusionsSection
from handler.report.sections.gt_errors import SuspectedGtErrorsSection
from handler.report.sections.near_misses import NearMissesSection
from handler.report.sections.per_class import PerClassSection
from handler.report.sections.reading import OtherReadingSection
from handler.report.sections.routing import RoutingSection
from handler.report.sections.sketches import PicturesSection, SketchesSection
from handler.report.sections.slices import SlicesSection
from handler.report.sections.sweep import ConfidenceSweepSection
from handler.report.sections.time_saved import TimeSaved as TimeSaved
from handler.report.sections.time_saved import TimeSection
from handler.report.sections.uncertainty import UncertaintySection
from handler.report.sections.work import BySizeSection, ImagesWithMostWorkSection

KIND: Final = "dataset_intelligence_findings_v1"


class Parameters(Section):
    iou_min: float
    iou_perfect: float
    confidence_threshold: Threshold
    confidence_threshold_input: str = Field(description="CONFIDENCE_THRESHOLD exactly as given.")
    confidence_threshold_replaced: bool = Field(description="The input was not a number, so 0 was used.")


class DatasetFigures(Section):
    images: Count = Field(description="Assets present in both datasets (scored).")
    gt_objects: Count
    predictions: Count = Field(description="Before the confidence filter.")
    predictions_kept: Count = Field(description="After the confidence filter.")
    gt_only_images: Count
    pred_only_images: Count
    gt_source: str
    pred_source: str
    gt_format: str
    pred_format: str
    classes: Count
    crowd_excluded: Count


class Execution(Section):
    """Where the shards ran; the only section that may differ between executors."""

    engine: Literal["in-process", "local-processes", "dask"]
    workers: int = Field(ge=1)
    shards: int = Field(ge=1, description="Shards of whole assets evaluated and merged.")


class SkippedBoxEntry(Section):
    source: str
    position: str
    problem: str


class Skipped(Section):
    count: Count
    listed: tuple[SkippedBoxEntry, ...]


WarningCode = Literal[
    "other_reading",
    "predictions_elsewhere",
    "layout_mismatch",
    "class_names_disjoint",
    "boxes_skipped",
    "ground_truth_has_confidences",
    "assets_unmatched",
    "image_size_mismatch",
    "duplicate_ground_truth",
    "confidence_threshold_replaced",
    "predictions_equal_ground_truth",
    "crowd_excluded",
]


class DataWarning(BaseModel):
    """Data that looks wrong in a way that changes the meaning of the score (or a note on what was
    left out); the keys beyond code, severity and message are the figures it was decided from."""

    model_config = ConfigDict(extra="allow", frozen=True)
    __pydantic_extra__: dict[str, int | float | str]

    code: WarningCode
    severity: Literal["warning", "info"] = Field(
        description="warning: the score may mean something else than it seems; info: what was left out."
    )
    message: str = Field(min_length=1)

    @classmethod
    def of(cls, code: WarningCode, severity: str, message: str, **figures: int | float | str) -> DataWarning:
        return cls.model_validate({"code": code, "severity": severity, "message": message, **figures})

    @property
    def figures(self) -> dict[str, int | float | str]:
        return dict(self.__pydantic_extra__)


class Findings(Section):
    """Prelabeling efficiency findings (dataset_intelligence_findings_v1)."""

    kind: Literal["dataset_intelligence_findings_v1"]
    report_id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    created_at: str = Field(json_schema_extra={"format": "date-time"})
    efficiency_level: Grade
    assistance_score: Score
    verdict: str = Field(min_length=1)
    reason: str | None = Field(description="Why nothing could be scored; null when something was.")
    counts: Counts
    shares: Shares
    mean_iou: Score | None
    parameters: Parameters
    dataset: DatasetFigures
    skipped: Skipped
    warnings: tuple[DataWarning, ...] = Field(
        description="Data-health warnings, most serious first; shown under the verdict and on stderr."
    )
    notes: tuple[str, ...] = Field(description="The warnings' messages, for v1 readers of `notes`.")
    # The analysis sections: one line each registers a section (handler/report/sections/).
    actions: ActionsSection
    confusions: ConfusionsSection
    per_class: PerClassSection
    confidence_sweep: ConfidenceSweepSection
    images_with_most_work: ImagesWithMostWorkSection
    by_size: BySizeSection
    near_misses: NearMissesSection
    time: TimeSection
    uncertainty: UncertaintySection
    slices: SlicesSection
    routing: RoutingSection
    other_reading: OtherReadingSection = None
    suspected_gt_errors: SuspectedGtErrorsSection
    sketches: SketchesSection
    pictures: PicturesSection
    execution: Execution

    def document(self) -> dict[str, object]:
        """The JSON document: plain data under the published key names (`class`, not `class_name`)."""
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self) -> bytes:
        return orjson.dumps(self.document(), option=orjson.OPT_INDENT_2)
