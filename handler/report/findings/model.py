"""The findings document (kind `dataset_intelligence_findings_v1`) as typed, frozen models.

The run-level parts are here; each analysis section is one module in handler/report/findings/sections/
(its models, builder and page fragment), registered by one typed field of `Findings`.
`schemas/findings.schema.json` is generated from these models (`python -m handler.report.findings.schema
--write`), so the two cannot drift.
"""

from __future__ import annotations

from typing import Final, Literal

import orjson
from pydantic import Field

from handler.report.findings.fields import Count, Section, Threshold

# Re-exported: the CLI and EfficiencyResult read these from here.
from handler.report.findings.fields import Counts as Counts
from handler.report.findings.fields import Grade as Grade
from handler.report.findings.fields import Score as Score
from handler.report.findings.fields import Shares as Shares
from handler.report.findings.sections.actions import ActionsSection, ConfusionsSection
from handler.report.findings.sections.gt_errors import SuspectedGtErrorsSection
from handler.report.findings.sections.near_misses import NearMissesSection
from handler.report.findings.sections.per_class import PerClassSection
from handler.report.findings.sections.reading import OtherReadingSection
from handler.report.findings.sections.recommendation import RecommendationSection
from handler.report.findings.sections.review import ReviewQueueSection
from handler.report.findings.sections.sketches import PicturesSection, SketchesSection
from handler.report.findings.sections.slices import SlicesSection
from handler.report.findings.sections.sweep import ConfidenceSweepSection
from handler.report.findings.sections.time_saved import TimeSaved as TimeSaved
from handler.report.findings.sections.time_saved import TimeSection
from handler.report.findings.sections.uncertainty import UncertaintySection
from handler.report.findings.sections.work import BySizeSection, ImagesWithMostWorkSection
from handler.report.findings.warnings import DataWarning as DataWarning
from handler.report.findings.warnings import WarningsSection

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
    gt_read_as: tuple[str, ...] = Field(
        description="How the GT was read, part by part, each with where it came from (the format's, "
        "detected, given); a reading proposed instead is in `other_reading`."
    )
    pred_read_as: tuple[str, ...] = Field(description="The same for the predictions.")
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


class Findings(Section):
    """Prelabeling efficiency findings (dataset_intelligence_findings_v1)."""

    kind: Literal["dataset_intelligence_findings_v1"]
    report_id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    created_at: str = Field(json_schema_extra={"format": "date-time"})
    efficiency_level: Grade
    assistance_score: Score
    verdict: str = Field(min_length=1)
    recommendation: RecommendationSection
    reason: str | None = Field(description="Why nothing could be scored; null when something was.")
    counts: Counts
    shares: Shares
    mean_iou: Score | None
    parameters: Parameters
    dataset: DatasetFigures
    skipped: Skipped
    warnings: WarningsSection
    notes: tuple[str, ...] = Field(description="The warnings' messages, for v1 readers of `notes`.")
    # The analysis sections: one line each registers a section (handler/report/findings/sections/).
    actions: ActionsSection
    confusions: ConfusionsSection
    per_class: PerClassSection
    confidence_sweep: ConfidenceSweepSection
    images_with_most_work: ImagesWithMostWorkSection
    review_queue: ReviewQueueSection
    by_size: BySizeSection
    near_misses: NearMissesSection
    time: TimeSection
    uncertainty: UncertaintySection
    slices: SlicesSection
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
