"""`recommendation`: the one policy the report recommends, by one criterion, labeler time saved.

Each class with enough boxes at its own fastest threshold (or drawn), every other class at the
best single threshold of the sweep: never worse than that threshold, by construction
(engine/routing.py). The page, the verdict, the CLI summary, `routing.json` and `export` (its
default policy) all say this one.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, Protocol

from pydantic import AliasChoices, Field

from handler.datasets.read_options import option_flag
from handler.engine.analyses.box_counts import BOX_COUNTS
from handler.engine.analyses.data_health import DATA_HEALTH
from handler.engine.counts import OutcomeCounts
from handler.engine.policy import Policy, Spread, intervals, policy_of
from handler.engine.routing import DRAW, MIN_CLASS_BOXES
from handler.features.time.section import TimeSaved
from handler.readings.verdict import Rescored
from handler.sections import charts
from handler.sections.context import RunFacts
from handler.sections.fields import Count, Parameters, Score, Section, Threshold
from handler.sections.shown import Shown
from handler.sections.wording import (
    SHAPE_WORDS,
    ShapeWords,
    as_said,
    between,
    duration,
    give_or_take,
    saved_time,
    saving,
)

CRITERION: Final = "labeler time saved"
# Classes named one by one in the recommendation's sentence; more are counted.
NAMED_CLASSES: Final = 3


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
    misread: bool = Field(
        default=False,
        description="The files look misread: `says` is how to read them (the verdict's first words), "
        "and no threshold advice is given on them.",
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
        return f"keep the {given}, which saves {saved_time(used_saved)}"
    value, low, high = gain
    more = "no more" if saved_time(value) == "no time" else f"{duration(value)} more"
    sure = "" if duration(low) == duration(high) == duration(value) else f", {between(low, high, duration)}"
    return (
        f"keep the {given}, since no other threshold saves clearly more than its {saved_time(used_saved)} "
        f"(the best would save {more}{sure})"
    )


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
    words: ShapeWords = SHAPE_WORDS["boxes"],
) -> str:
    """`pre-label at ≥ 0.15, with person at ≥ 0.4, to save 4 h 40 min (between … and …, 19 times
    in 20), 2 h 22 min more than at the 0.5 given`: the time at the threshold given is the verdict's
    first sentence, so this one says the gain over it, not that time again."""
    if classes and all(row.action == "draw" for row in classes):
        return f"draw {words.every}: no threshold saves time over drawing from scratch"
    named = _exceptions(classes, single)
    parts = [
        f"{_named(row.class_name)} "
        + ("drawn" if row.threshold is None else f"at {_threshold_text(row.threshold)}")
        for row in named[:NAMED_CLASSES]
    ]
    if len(named) > NAMED_CLASSES:
        parts.append(f"{len(named) - NAMED_CLASSES} more classes at their own (routing.json)")
    head = f"pre-label at {_threshold_text(single)}" + (f", with {', '.join(parts)}," if parts else "")
    spread = "" if interval is None else give_or_take(saved, *interval, saved_time)
    gain = saved_time(as_said(saved) - as_said(used_saved))
    if gain == "no time" and not parts and single == used:
        sure = "" if interval is None or not spread else f"; its saving is {between(*interval, saved_time)}"
        return f"{head} as given: no other threshold saves more{sure}"
    than_given = f"{used:g} given"
    more = f"as much as at the {than_given}" if gain == "no time" else f"{gain} more than at the {than_given}"
    return f"{head} to save {saved_time(saved)}{spread}, {more}"


def reading_first(found: Rescored) -> str:
    """A reading that scores clearly better comes first: its options and its score; no threshold
    advice stands on rows read wrong."""
    options = (
        "no read option applies it to part of the files: write them as the rest are"
        if found.reading.partial
        else " ".join(f'{option_flag(part.key)} "{part.value}"' for part in found.reading.parts)
    )
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


def recommended_classes(policy: Policy) -> tuple[RecommendedClass, ...]:
    """Every class with a box at some threshold, in the class order: what the policy does with it."""
    routed = policy.routing
    boxes = policy.class_counts[:, routed.best_single, :].sum(axis=1)
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
        for row in policy.boxed_rows().tolist()
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
    interval, gain = intervals(spread, saved, saved - used_saved, facts.costs)
    why_not = withheld(facts)
    found = Recommendation(
        criterion=CRITERION,
        says=says(classes, policy.single, saved, interval, used, used_saved, facts.words),
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
            "misread": why_not is not None,
            "seconds_saved": used_saved,
            "seconds_saved_low": None,
            "seconds_saved_high": None,
            "score": facts.state.tally.assistance_score,
        }
    )


# A bar of the figure: its label, the seconds saved, and their interval (None: none drawn).
Bar = tuple[str, float, tuple[float, float] | None]


class _Drawn(Protocol):
    """What the recommendation's figure reads of the findings."""

    @property
    def recommendation(self) -> Recommendation: ...
    @property
    def time(self) -> TimeSaved: ...
    @property
    def parameters(self) -> Parameters: ...


def recommendation_figure(findings: _Drawn) -> dict[str, Any]:
    """Bars of time saved: at the threshold given, at the best single one, recommended; a bar
    that would say the next one's time again is left out (one figure per fact)."""
    r, scratch = findings.recommendation, findings.time.from_scratch_seconds
    given = f"{findings.parameters.confidence_threshold:g}"
    if r.kept is not None:  # the given, kept; the sweep's best beside it when it says another time
        kept: Bar = (f"at {given} (given, kept)", findings.time.saved_seconds, None)
        best: Bar = (f"all at {_threshold_text(r.threshold)}", r.threshold_seconds_saved, None)
        shown = [kept] if saving(best[1]) == saving(kept[1]) else [kept, best]
        return {"recommendation_fig": charts.saving_bars(shown, scratch), "min_class_boxes": MIN_CLASS_BOXES}
    low, high = r.seconds_saved_low, r.seconds_saved_high
    recommended = ("recommended", r.seconds_saved, None if low is None or high is None else (low, high))
    single = (f"all at {_threshold_text(r.threshold)}", r.threshold_seconds_saved, None)
    said = {saving(findings.time.saved_seconds), saving(r.seconds_saved)}
    bars: list[tuple[str, float, tuple[float, float] | None]] = [
        (f"at {given} (given, graded)", findings.time.saved_seconds, None),
        *([] if saving(single[1]) in said else [single]),
        recommended,
    ]
    if len(bars) == 2 and saving(bars[0][1]) == saving(r.seconds_saved):
        bars = [(f"at {given} (given)", *recommended[1:])]
    return {"recommendation_fig": charts.saving_bars(bars, scratch), "min_class_boxes": MIN_CLASS_BOXES}


RecommendationSection = Annotated[
    Recommendation,
    Shown(recommendation, "recommendation", draw=recommendation_figure),
]
