"""`recommendation`: the one policy the report recommends, by one criterion, labeler time saved.

Each class with enough boxes at its own fastest threshold (or drawn), every other class at the
best single threshold of the sweep: never worse than that threshold, by construction
(engine/routing.py). The page, the verdict, the CLI summary, `routing.json` and `export` (its
default policy) all say this one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

import numpy as np
from pydantic import AliasChoices, Field

from handler.boxes import IntArray
from handler.datasets.read_options import option_flag
from handler.engine import routing as engine_routing
from handler.engine.analyses.box_counts import BOX_COUNTS
from handler.engine.analyses.data_health import DATA_HEALTH
from handler.engine.bootstrap import LEVEL, percentile_interval, resampled_counts
from handler.engine.counts import OutcomeCounts
from handler.engine.outcomes import N_OUTCOMES
from handler.engine.readings.verdict import Rescored
from handler.engine.routing import DRAW, MIN_CLASS_BOXES, RoutingPolicy
from handler.engine.state import EvaluationState
from handler.engine.timecost import TimeCosts
from handler.features.sweep.partial import CONFIDENCE_SWEEP
from handler.report import charts
from handler.report.findings.context import RunFacts
from handler.report.findings.fields import Count, Score, Section, Threshold
from handler.report.findings.shown import Shown
from handler.report.findings.wording import duration

if TYPE_CHECKING:
    from handler.report.findings.model import Findings

CRITERION: Final = "labeler time saved"
# Classes named one by one in the recommendation's sentence; more are counted.
NAMED_CLASSES: Final = 3


@dataclass(frozen=True)
class Policy:
    """The merged run's recommendation: the engine's policy and what it is over."""

    routing: RoutingPolicy
    thresholds: list[float]  # the sweep's
    class_names: tuple[str, ...]
    class_counts: IntArray  # (n_classes, n_thresholds, 5)

    @property
    def single(self) -> float:
        return self.thresholds[self.routing.best_single]

    def threshold_of(self, row: int) -> float | None:
        choice = int(self.routing.choice[row])
        return None if choice == DRAW else self.thresholds[choice]

    def thresholds_by_name(self) -> dict[str, float]:
        """Each class the policy knows: its threshold, +inf to draw it."""
        return {
            name: math.inf if (t := self.threshold_of(row)) is None else t
            for row, name in enumerate(self.class_names)
        }


def policy_of(state: EvaluationState, used_threshold: float, costs: TimeCosts) -> Policy:
    swept = state.of(CONFIDENCE_SWEEP)
    thresholds = [point.threshold for point in swept.sweep.points]
    counts = swept.by_class.counts
    used = swept.sweep.column(used_threshold)
    return Policy(engine_routing.route(counts, used, costs), thresholds, tuple(swept.by_class.names), counts)


def _no_counts() -> IntArray:
    return np.zeros((0, N_OUTCOMES), dtype=np.int64)


@dataclass(frozen=True)
class Spread:
    """The finisher's data: outcome counts under the policy on a seeded sample of the images, and
    at the threshold given on the same images (the gain's interval is paired)."""

    counts: IntArray = field(default_factory=_no_counts)
    images: int = 0  # every scored image (the sample is of them)
    used: IntArray = field(default_factory=_no_counts)


def saved_interval(spread: Spread, saved: float, costs: TimeCosts) -> tuple[float, float] | None:
    """The 95 % interval of the time saved over the images: the bootstrap of the sample's per-image
    counts, its spread scaled to all the images (a total's spread grows as the square root of the
    images), around the exact figure."""
    sample = spread.counts
    if not len(sample):
        return None
    resampled = OutcomeCounts(resampled_counts(sample)).seconds_saved(costs)
    centre = float(OutcomeCounts(sample.sum(axis=0)).seconds_saved(costs))
    low, high = percentile_interval(resampled - centre, LEVEL)
    scale = math.sqrt(spread.images / len(sample))
    return saved + low * scale, saved + high * scale


def gain_interval(spread: Spread, gain: float, costs: TimeCosts) -> tuple[float, float] | None:
    """The 95 % interval of the time the policy saves over the threshold given: the paired
    bootstrap of the sample's per-image counts under both (the same draws, so the images' own
    difficulty leaves it), its spread scaled to all the images, around the exact gain."""
    policy, used = spread.counts, spread.used
    if not len(policy) or used.shape != policy.shape:
        return None
    summed = resampled_counts(np.hstack((policy, used)))
    split = policy.shape[1]
    under, given = OutcomeCounts(summed[:, :split]), OutcomeCounts(summed[:, split:])
    resampled = under.seconds_saved(costs) - given.seconds_saved(costs)
    centre = float(
        OutcomeCounts(policy.sum(axis=0)).seconds_saved(costs)
        - OutcomeCounts(used.sum(axis=0)).seconds_saved(costs)
    )
    low, high = percentile_interval(resampled - centre, LEVEL)
    scale = math.sqrt(spread.images / len(policy))
    return gain + low * scale, gain + high * scale


class RecommendedClass(Section):
    class_name: str = Field(serialization_alias="class", validation_alias=AliasChoices("class", "class_name"))
    action: Literal["pre-label", "draw"]
    threshold: Threshold | None = Field(description="The confidence threshold to pre-label at; null to draw.")
    own_threshold: Threshold | None = Field(
        description="The class's own fastest threshold, whatever its boxes (--policy per-class); null: draw."
    )
    own: bool = Field(
        description=f"Decided on the class's own boxes (at least {MIN_CLASS_BOXES}); false: it takes the "
        "recommendation's single threshold."
    )
    boxes: Count = Field(description="GT objects plus the class's false positives at the single threshold.")
    seconds_saved_vs_single: float = Field(
        description="Labeler seconds this class saves against the recommendation's single threshold (>= 0)."
    )


class Recommendation(Section):
    __doc__ = (
        f"The policy that saves the most labeler time: each class with at least {MIN_CLASS_BOXES} boxes at "
        "its own fastest threshold or drawn, every other class at the single threshold that saves the most; "
        "never worse than any single threshold. Classes are treated as independent."
    )

    criterion: Literal["labeler time saved"]
    says: str = Field(description="The recommendation in one sentence, as the verdict gives it.")
    threshold: Threshold = Field(
        description="The single threshold that saves the most (for every class without its own evidence; "
        "unless `kept`)."
    )
    classes: tuple[RecommendedClass, ...] = Field(
        description="The classes some policy treats otherwise than `threshold` (decided on their own "
        "boxes, or whose own fastest threshold differs); every other class takes `threshold`. "
        "routing.json lists every class."
    )
    seconds_saved: float = Field(description="Labeler seconds the recommendation saves against drawing all.")
    seconds_saved_low: float | None = Field(
        description="95 % interval over the images (null: nothing scored)."
    )
    seconds_saved_high: float | None
    interval_images: Count = Field(
        description="Images the interval's spread was measured on (a seeded sample)."
    )
    score: Score = Field(
        description="The assistance score under the recommendation (drawn classes as drawn)."
    )
    threshold_seconds_saved: float = Field(description="What the single threshold alone saves.")
    kept: Threshold | None = Field(
        default=None,
        description="The threshold given, kept for every class (routing.json and the export apply it): "
        "the policy's gain over it is within the noise of the images (its 95 % interval reaches zero), "
        "or the files look misread (another reading scores clearly better, or most of a side was "
        "skipped); `seconds_saved` and `score` are then the given's. null: the policy is recommended.",
    )

    def threshold_for(self, class_name: str, own: bool = False) -> float | None:
        """A class's threshold (its own fastest with `own`; None: draw it); a class not listed
        takes `threshold` under every policy; every class takes `kept` when it is set (not `own`)."""
        if self.kept is not None and not own:
            return self.kept
        for row in self.classes:
            if row.class_name == class_name:
                return row.own_threshold if own else row.threshold
        return self.threshold


def _threshold_text(threshold: float) -> str:
    """`≥ 0.4`; 0 says what it means: every prediction is kept."""
    return "≥ 0 (every prediction kept)" if threshold == 0 else f"≥ {threshold:g}"


def keep_given(used: float, used_saved: float, gain: tuple[float, float, float] | None) -> str:
    """`keep the 0.5 given`: no policy saves clearly more than the threshold given (the interval of
    its gain, the best policy's seconds over the given's, reaches zero), or nothing could say."""
    given = "0 given (every prediction kept)" if used == 0 else f"{used:g} given"
    if gain is None:
        return f"keep the {given}, which saves {_time(used_saved)}"
    value, low, high = gain
    return (
        f"keep the {given}, since no other threshold saves clearly more than its {_time(used_saved)} "
        f"(the best would save {_signed(value)} more, 95% interval {_signed(low)} to {_signed(high)})"
    )


def _signed(seconds: float) -> str:
    return duration(seconds) if seconds >= 0 else f"-{duration(-seconds)}"


def _exceptions(classes: tuple[RecommendedClass, ...], single: float) -> list[RecommendedClass]:
    """The classes that leave the single threshold, most seconds saved first."""
    other = [row for row in classes if row.threshold != single]
    return sorted(other, key=lambda row: -row.seconds_saved_vs_single)


def says(
    classes: tuple[RecommendedClass, ...],
    single: float,
    saved: float,
    interval: tuple[float, float] | None,
    used: float,
    used_saved: float,
) -> str:
    """`pre-label at ≥ 0.15, with person at ≥ 0.4, to save 4 h 40 min (95% interval …) instead of
    2 h 18 min at the 0.5 given`."""
    if classes and all(row.action == "draw" for row in classes):
        return "draw every box: no threshold saves time over drawing from scratch"
    named = _exceptions(classes, single)
    parts = [
        f"{_named(row.class_name)} "
        + ("drawn" if row.threshold is None else f"at {_threshold_text(row.threshold)}")
        for row in named[:NAMED_CLASSES]
    ]
    if len(named) > NAMED_CLASSES:
        parts.append(f"{len(named) - NAMED_CLASSES} more classes at their own (routing.json)")
    head = f"pre-label at {_threshold_text(single)}" + (f", with {', '.join(parts)}," if parts else "")
    spread = "" if interval is None else f" (95% interval {_time(interval[0])} to {_time(interval[1])})"
    if math.isclose(saved, used_saved) and not parts and single == used:
        return f"{head} as given: no threshold saves more than its {_time(saved)}{spread}"
    return f"{head} to save {_time(saved)}{spread} instead of {_time(used_saved)} at the {used:g} given"


def reading_first(found: Rescored) -> str:
    """A reading that scores clearly better comes first: its options and its score; no threshold
    advice stands on rows read wrong."""
    options = " ".join(f'{option_flag(part.key)} "{part.value}"' for part in found.reading.parts)
    return (
        f"read the files as {found.reading.says} ({options}): they score {found.under.score:.2f} "
        f"({found.under.grade}) instead of {found.as_read.score:.2f} as read; run again read that way "
        "for threshold advice"
    )


# Threshold advice waits when more than this share of a side's boxes were skipped.
SKIPPED_SHARE_MAX: Final = 0.5


def most_skipped(facts: RunFacts) -> str | None:
    """Most of a side skipped (a reason the node could not read past): what to fix first."""
    figures, health = facts.state.of(BOX_COUNTS), facts.state.of(DATA_HEALTH)
    sides = (
        ("ground-truth boxes", figures.gt_skipped, health.gt_boxes, health.gt_skip_reasons),
        ("predictions", figures.pred_skipped, health.pred_boxes, health.pred_skip_reasons),
    )
    for what, skipped, kept, reasons in sides:
        read = skipped + kept
        if read and skipped > SKIPPED_SHARE_MAX * read:
            commonest = max(sorted(reasons), key=lambda reason: reasons[reason], default="skipped")
            return (
                f"fix how the {what} are read first: {skipped} of {read} were skipped ({commonest}, see "
                "the warnings), so no threshold advice stands on the rest"
            )
    return None


def _named(class_name: str) -> str:
    """A class in the sentence: `person`; a name that reads as a number is quoted (`"14"`)."""
    return f'"{class_name}"' if class_name.replace(".", "").isdigit() else class_name


def _time(seconds: float) -> str:
    """A time saved in the sentence: `47 min`, or `12 min lost` (never a negative duration)."""
    return duration(seconds) if seconds >= 0 else f"{duration(-seconds)} lost"


def recommended_classes(policy: Policy) -> tuple[RecommendedClass, ...]:
    """Every class with a box at some threshold, in the class order: what the policy does with it."""
    routed = policy.routing
    boxes = policy.class_counts[:, routed.best_single, :].sum(axis=1)
    listed = np.flatnonzero(policy.class_counts.sum(axis=(1, 2)) > 0)
    return tuple(
        RecommendedClass(
            class_name=policy.class_names[row],
            action="draw" if routed.choice[row] == DRAW else "pre-label",
            threshold=policy.threshold_of(row),
            own_threshold=None if routed.own[row] == DRAW else policy.thresholds[int(routed.own[row])],
            own=not bool(routed.guarded[row]),
            boxes=int(boxes[row]),
            seconds_saved_vs_single=float(routed.best_single_seconds[row] - routed.seconds[row]),
        )
        for row in listed.tolist()
    )


def departs(row: RecommendedClass, single: float) -> bool:
    """A class some policy treats otherwise than the single threshold (the findings list only these)."""
    return row.own or row.threshold != single or row.own_threshold != single


def withheld(facts: RunFacts) -> str | None:
    """Why no threshold is advised: the files read another way score clearly better, or most of a
    side was skipped (None: advise)."""
    return reading_first(facts.reading) if facts.reading is not None else most_skipped(facts)


def recommendation(facts: RunFacts) -> Recommendation:
    used = facts.inputs.confidence.value
    policy = policy_of(facts.state, used, facts.costs)
    routed = policy.routing
    classes = recommended_classes(policy)
    scratch = float(routed.scratch_seconds.sum())
    saved = scratch - float(routed.seconds.sum())
    used_saved = scratch - float(routed.used_seconds.sum())
    spread = facts.finished(Spread)
    gain = gain_interval(spread, saved - used_saved, facts.costs)
    why_not = withheld(facts)
    interval = saved_interval(spread, saved, facts.costs)
    found = Recommendation(
        criterion="labeler time saved",
        says=says(classes, policy.single, saved, interval, used, used_saved),
        threshold=policy.single,
        classes=tuple(row for row in classes if departs(row, policy.single)),
        seconds_saved=saved,
        seconds_saved_low=None if interval is None else interval[0],
        seconds_saved_high=None if interval is None else interval[1],
        interval_images=len(spread.counts),
        score=OutcomeCounts(routed.counts).score,
        threshold_seconds_saved=scratch - float(routed.best_single_seconds.sum()),
    )
    if why_not is None and gain is not None and gain[0] > 0:
        return found
    # the threshold given stands, for every class: the page, routing.json and the export alike
    return found.model_copy(
        update={
            "says": why_not
            or keep_given(used, used_saved, None if gain is None else (saved - used_saved, *gain)),
            "kept": used,
            "seconds_saved": used_saved,
            "seconds_saved_low": None,
            "seconds_saved_high": None,
            "score": facts.state.tally.assistance_score,
        }
    )


def recommendation_figure(findings: Findings) -> dict[str, Any]:
    """Three bars of time saved: at the threshold given, at the best single one, recommended."""
    r, scratch = findings.recommendation, findings.time.from_scratch_seconds
    given = f"{findings.parameters.confidence_threshold:g}"
    low, high = r.seconds_saved_low, r.seconds_saved_high
    bars: list[tuple[str, float, tuple[float, float] | None]] = [
        (f"at {given} (given, graded)", findings.time.saved_seconds, None),
        (f"all at {_threshold_text(r.threshold)}", r.threshold_seconds_saved, None),
        ("recommended", r.seconds_saved, None if low is None or high is None else (low, high)),
    ]
    return {"recommendation_fig": charts.saving_bars(bars, scratch), "min_class_boxes": MIN_CLASS_BOXES}


RecommendationSection = Annotated[
    Recommendation,
    Shown(recommendation, "recommendation", draw=recommendation_figure),
]
