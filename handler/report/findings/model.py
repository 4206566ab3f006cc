"""The findings document (kind `dataset_intelligence_findings_v1`, shape `VERSION`) as typed, frozen models.

The run-level parts are here; each feature's section is in its folder (handler/features/<name>/:
its models, builder, figure geometry and page fragment), registered by one typed field of
`Findings`, whose order is the page's.
`schemas/findings.schema.json` is generated from these models (`python -m handler.report.findings.schema
--write`), so the two cannot drift.
"""

from __future__ import annotations

from typing import Final, Literal

import orjson
from pydantic import Field

from handler.features.actions.section import ConfusionsSection
from handler.features.dataset.section import DatasetFigures as DatasetFigures
from handler.features.dataset.section import DatasetSection, Skipped
from handler.features.gauge.section import UncertaintySection
from handler.features.gt_errors.section import SuspectedGtErrorsSection
from handler.features.near_misses.section import NearMissesSection
from handler.features.outcomes.section import OutcomesSection
from handler.features.per_class.section import PerClassSection
from handler.features.reading.section import OtherReadingSection
from handler.features.recommendation.section import RecommendationSection
from handler.features.review.section import ReviewQueueSection
from handler.features.sketches.section import PicturesSection
from handler.features.slices.section import SlicesSection
from handler.features.sweep.section import ConfidenceSweepSection
from handler.features.time.section import TimeSaved as TimeSaved
from handler.features.time.section import TimeSection
from handler.features.warnings.section import DataWarning as DataWarning
from handler.features.warnings.section import WarningsSection
from handler.features.work.section import BySizeSection, ImagesWithMostWorkSection

# Re-exported: the CLI and EfficiencyResult read these from here.
from handler.sections.fields import Counts as Counts
from handler.sections.fields import Grade as Grade
from handler.sections.fields import Parameters, Section
from handler.sections.fields import Score as Score

KIND: Final = "dataset_intelligence_findings_v1"  # the platform's kind (node.json), kept across shapes
# The shape's version; docs/report.md says what each changed for readers of the one before.
VERSION: Final = 3


class Execution(Section):
    """Where the shards ran; the only section that may differ between executors."""

    engine: Literal["in-process", "local-processes", "dask"]
    workers: int = Field(ge=1)
    shards: int = Field(ge=1, description="Shards of whole assets evaluated and merged.")


class Findings(Section):
    """Prelabeling efficiency findings (dataset_intelligence_findings_v1)."""

    kind: Literal["dataset_intelligence_findings_v1"]
    version: Literal[3] = Field(
        description="The document's shape. 3 (from 2): no field restates another or goes unread: no "
        "`actions` (the outcome `counts` under the actions' names), `review_queue.seconds` "
        "(`time.with_predictions_seconds`), `near_misses.iou_min` (`parameters.iou_min`), "
        "`dataset.gt_format`/`pred_format` (the first of `gt_read_as`/`pred_read_as`); `verdict` no "
        "longer ends with the recommendation (`recommendation.says`); gone unread: "
        "`suspected_gt_errors.score_if_gt_fixed`/`grade_if_gt_fixed`, `review_queue.images_with_work`, "
        "`confidence_bins[].right_share`, `uncertainty.borderline`/`images_for_margin`."
    )
    report_id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    created_at: str = Field(json_schema_extra={"format": "date-time"})
    efficiency_level: Grade
    assistance_score: Score
    verdict: str = Field(
        min_length=1,
        description="The score and grade at the threshold given, the time it saves, which way what is left "
        "leans; the recommendation is `recommendation.says`.",
    )
    reason: str | None = Field(description="Why nothing could be scored; null when something was.")
    mean_iou: Score | None
    parameters: Parameters
    execution: Execution
    # The features, in the page's order: one line registers each (handler/features/<name>/).
    warnings: WarningsSection
    uncertainty: UncertaintySection
    other_reading: OtherReadingSection = None
    counts: OutcomesSection
    recommendation: RecommendationSection
    time: TimeSection
    per_class: PerClassSection
    pictures: PicturesSection
    confidence_sweep: ConfidenceSweepSection
    dataset: DatasetSection
    skipped: Skipped
    confusions: ConfusionsSection
    images_with_most_work: ImagesWithMostWorkSection
    slices: SlicesSection
    # Data the features above show besides their own field.
    review_queue: ReviewQueueSection
    by_size: BySizeSection
    near_misses: NearMissesSection
    suspected_gt_errors: SuspectedGtErrorsSection

    def headline(self) -> str:
        """The verdict, then the recommendation once something was scored: the page's and the
        CLI's first sentences."""
        if self.reason is not None:
            return self.verdict
        says = self.recommendation.says
        if self.recommendation.misread:
            return f"{says[0].upper()}{says[1:]}. {self.verdict}"
        return f"{self.verdict} Recommended: {says}."

    def document(self) -> dict[str, object]:
        """The JSON document: plain data under the published key names (`class`, not `class_name`)."""
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self) -> bytes:
        """Compact, as stored; `prelabel-eval show ID --json` prints it indented."""
        return orjson.dumps(self.document())
