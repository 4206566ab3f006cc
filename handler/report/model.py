"""The findings document (kind `dataset_intelligence_findings_v1`) as typed, frozen models.

One model per section; `Findings` nests them. `schemas/findings.schema.json` is generated
from these models (`python -m handler.report.schema --write`), so the two cannot drift.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

import orjson
from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from handler.engine.analysis import SIZE_BOUNDS
from handler.engine.evaluation import NEAR_MISS_FLOOR
from handler.engine.gt_errors import MISSING_MAX_IOU, SUSPECT_CONFIDENCE, TOP_SUSPECTS
from handler.engine.outcomes import OUTCOMES, Tally
from handler.engine.routing import MIN_CLASS_BOXES
from handler.engine.sweep import RECOMMEND_GAIN, SWEEP_GRID

KIND: Final = "dataset_intelligence_findings_v1"
TOP_CONFUSIONS: Final = 10
TOP_IMAGES: Final = 10

Count = Annotated[int, Field(ge=0)]
Score = Annotated[float, Field(ge=0, le=1)]
Threshold = Annotated[float, Field(ge=0, le=1)]
Seconds = Annotated[float, Field(ge=0)]
# Literals, not the engine's tuples, so that mypy checks them; a test pins them to GRADES and SIZE_NAMES.
Grade = Literal["Production-grade", "Strong assist", "Partial assist", "Minimal assist"]
SizeName = Literal["small", "medium", "large"]


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Counts(Section):
    """Boxes per outcome (a matched pair counts once) and their total."""

    correct: Count
    shifted: Count
    class_confused: Count
    false_positive: Count
    false_negative: Count
    total: Count

    @classmethod
    def of(cls, tally: Tally) -> Counts:
        return cls.model_validate(tally.count_dict())

    def outcomes(self) -> dict[str, int]:
        """The five outcome counts, in outcome order, without the total."""
        return {name: getattr(self, name) for name in OUTCOMES}


class Shares(Section):
    """Each outcome's count / total (0 when total is 0)."""

    correct: Score
    shifted: Score
    class_confused: Score
    false_positive: Score
    false_negative: Score

    @classmethod
    def of(cls, tally: Tally) -> Shares:
        return cls.model_validate(tally.shares())


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


class Actions(Section):
    """What the labeler does: accept correct, nudge shifted, relabel class-confused, delete FP, draw FN."""

    accept: Count
    nudge: Count
    relabel: Count
    delete: Count
    draw: Count


class Confusion(Section):
    gt_class: str
    pred_class: str
    count: int = Field(ge=1)


class ClassRow(Section):
    # `class` is a Python keyword: the attribute is `class_name`, the JSON key stays `class`.
    class_name: str = Field(serialization_alias="class", validation_alias=AliasChoices("class", "class_name"))
    counts: Counts
    assistance_score: Score


class SweepPointFigures(Section):
    threshold: Threshold
    assistance_score: Score
    predictions_kept: Count
    counts: Counts


def _grid_text() -> str:
    step = SWEEP_GRID[1] - SWEEP_GRID[0]
    return f"{SWEEP_GRID[0]:.2f} to {SWEEP_GRID[-1]:.2f} in steps of {step:.2f}"


class ConfidenceSweep(Section):
    __doc__ = f"The assistance score at confidence thresholds {_grid_text()}, and at the one used."

    points: tuple[SweepPointFigures, ...] = Field(min_length=1)
    used_threshold: Threshold
    used_score: Score
    best_threshold: Threshold
    best_score: Score
    recommended: bool = Field(
        description=f"The best threshold beats the used one by at least {float(RECOMMEND_GAIN):g}."
    )


class ImageWork(Section):
    asset_id: str
    labeler_seconds: Seconds
    counts: Counts


class SizeRow(Section):
    size: SizeName
    counts: Counts
    assistance_score: Score


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


class ActionCosts(Section):
    """Seconds per labeler action."""

    accept: Seconds
    nudge: Seconds
    relabel: Seconds
    delete: Seconds
    draw: Seconds


class TimeSaved(Section):
    """Estimated labeler time with the predictions vs drawing every GT box from scratch."""

    costs_seconds: ActionCosts
    costs_adjusted: bool = Field(description="The costs differ from the defaults.")
    with_predictions_seconds: Seconds
    from_scratch_seconds: Seconds
    saved_seconds: float = Field(
        description="Negative when correcting the predictions takes longer than drawing."
    )
    saved_share: float = Field(le=1)
    draw_source: str
    assumptions: dict[str, str]


class GradeShare(Section):
    grade: Grade
    share: Score


class Interval(Section):
    low: float
    high: float


class Uncertainty(Section):
    """Per-image bootstrap: images drawn with replacement, seeded, so the same data gives the same figures."""

    level: float = Field(gt=0, lt=1)
    resamples: int = Field(ge=1000)
    seed: int
    score_low: Score
    score_high: Score
    grade_probabilities: tuple[GradeShare, ...] = Field(
        description="Every grade with the share of resamples that reach it, best first; shares sum to 1."
    )
    saved_seconds: Interval = Field(description="The same interval for time.saved_seconds.")
    borderline: bool = Field(description="The interval crosses a grade bound.")
    images_for_margin: int = Field(
        ge=1,
        description="About how many images would narrow the score interval to +-0.02: images x "
        "(half-width / 0.02)^2, since a bootstrap interval shrinks as 1/sqrt(images).",
    )


SliceSource = Literal["file", "tag"]


class SliceRow(Section):
    name: str
    source: SliceSource = Field(description="A --slices file's name, or a native asset tag.")
    images: Count = Field(description="Scored images in the slice.")
    unscored_assets: Count = Field(description="Listed assets that are not among the scored images.")
    counts: Counts
    assistance_score: Score
    grade: Grade
    score_low: Score | None = Field(description="The 95% bootstrap interval; null when nothing was scored.")
    score_high: Score | None
# --- routing (issue 13 item 2) ---


class RoutedClass(Section):
    class_name: str = Field(serialization_alias="class", validation_alias=AliasChoices("class", "class_name"))
    action: Literal["pre-label", "draw"]
    threshold: Threshold | None = Field(description="The confidence threshold to pre-label at; null to draw.")
    seconds_saved_vs_single: float = Field(
        description="Labeler seconds this class saves against the single threshold (>= 0 unless guarded)."
    )
    boxes: Count = Field(description="GT objects plus the class's false positives at the single threshold.")
    guarded: bool = Field(
        description=f"Fewer than {MIN_CLASS_BOXES} boxes: the class keeps the single threshold."
    )


class Routing(Section):
    __doc__ = (
        "A per-class pre-labeling policy: each class at its own sweep threshold, or drawn from scratch, "
        "whichever leaves the least labeler time; classes are treated as independent. A class with fewer "
        f"than {MIN_CLASS_BOXES} boxes keeps the single threshold."
    )

    single_threshold: Threshold
    min_class_boxes: Count
    classes: tuple[RoutedClass, ...]
    score: Score = Field(description="The assistance score under the policy (drawn classes count as drawn).")
    seconds_saved: float = Field(description="Labeler seconds the policy saves against drawing everything.")
    single_seconds_saved: float = Field(description="What the single threshold saves (never more).")


# --- suspected ground-truth errors (issue 13 item 3) ---


class SuspectedBoxEntry(Section):
    asset_id: str
    box: tuple[float, float, float, float] = Field(
        description="The prediction's [x_min, y_min, x_max, y_max]."
    )
    kind: Literal["missing_gt", "wrong_class"]
    confidence: Threshold
    iou: Score | None = Field(description="IoU with the matched GT box; null for missing_gt.")
    pred_class: str
    gt_class: str | None


class SuspectedGtErrors(Section):
    __doc__ = (
        f"Predictions with confidence >= {SUSPECT_CONFIDENCE:g} that contradict the GT: missing_gt, a false "
        f"positive no GT box of any class overlaps with IoU >= {MISSING_MAX_IOU:g}; wrong_class, a "
        "class-confused match with IoU >= IOU_PERFECT. Flagged in outcomes.jsonl (suspected_gt_error)."
    )

    confidence_from: Threshold
    count: Count
    missing_gt: Count
    wrong_class: Count
    listed: tuple[SuspectedBoxEntry, ...] = Field(
        max_length=TOP_SUSPECTS, description="The most confident suspects, most confident first."
    )
    score_if_gt_fixed: Score = Field(description="The assistance score if every suspect's GT were wrong.")
    grade_if_gt_fixed: Grade


WarningCode = Literal[
    "class_names_disjoint",
    "boxes_skipped",
    "ground_truth_has_confidences",
    "assets_unmatched",
    "image_size_mismatch",
    "duplicate_ground_truth",
    "confidence_threshold_replaced",
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
    actions: Actions
    confusions: tuple[Confusion, ...] = Field(
        max_length=TOP_CONFUSIONS,
        description="The most frequent class confusions, GT class -> predicted class, most frequent first.",
    )
    per_class: tuple[ClassRow, ...] = Field(
        description="Every class with a box on the scored images, most labeler seconds left first (ties: "
        "lowest score first); false positives by predicted class, the rest by GT class."
    )
    confidence_sweep: ConfidenceSweep
    images_with_most_work: tuple[ImageWork, ...] = Field(
        max_length=TOP_IMAGES, description="The images with the most estimated labeler time left, most first."
    )
    by_size: BySize
    near_misses: NearMisses
    time: TimeSaved
    uncertainty: Uncertainty | None = Field(description="Null when nothing was scored.")
    slices: tuple[SliceRow, ...] = Field(
        description="Per slice of the images (--slices file, then native asset tags, at most 50): "
        "score, grade and interval from the slice's own images."
    )
    routing: Routing
    suspected_gt_errors: SuspectedGtErrors
    execution: Execution

    def document(self) -> dict[str, object]:
        """The JSON document: plain data under the published key names (`class`, not `class_name`)."""
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self) -> bytes:
        return orjson.dumps(self.document(), option=orjson.OPT_INDENT_2)
