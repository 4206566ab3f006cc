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

from handler.features.actions.section import ActionsSection, ConfusionsSection
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
VERSION: Final = 2


class Execution(Section):
    """Where the shards ran; the only section that may differ between executors."""

    engine: Literal["in-process", "local-processes", "dask"]
    workers: int = Field(ge=1)
    shards: int = Field(ge=1, description="Shards of whole assets evaluated and merged.")


class Findings(Section):
    """Prelabeling efficiency findings (dataset_intelligence_findings_v1)."""

    kind: Literal["dataset_intelligence_findings_v1"]
    version: Literal[2] = Field(
        description="The document's shape. 2 (from 1): no `shares` (each is a count over `counts.total`), "
        "no `notes` (the warnings' messages), no `sketches` (drawing data, kept in the page), "
        "`recommendation.classes` lists only the classes that depart from its single threshold."
    )
    report_id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    created_at: str = Field(json_schema_extra={"format": "date-time"})
    efficiency_level: Grade
    assistance_score: Score
    verdict: str = Field(min_length=1)
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
    actions: ActionsSection
    images_with_most_work: ImagesWithMostWorkSection
    slices: SlicesSection
    # Data the features above show besides their own field.
    confusions: ConfusionsSection
    review_queue: ReviewQueueSection
    by_size: BySizeSection
    near_misses: NearMissesSection
    suspected_gt_errors: SuspectedGtErrorsSection

    def document(self) -> dict[str, object]:
        """The JSON document: plain data under the published key names (`class`, not `class_name`)."""
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self) -> bytes:
        """Compact (a third of the indented size); `prelabel-eval show ID --json` prints it indented."""
        return orjson.dumps(self.document())
