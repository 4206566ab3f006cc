"""The outcome cards: each outcome's share of the boxes, its count and what it counts at this run's
IoU thresholds, and the mean IoU of the matched pairs."""

from __future__ import annotations

from typing import Annotated, Any, Final, Protocol

import msgspec

from handler.engine import Outcome
from handler.features.time.section import TimeSaved
from handler.sections.fields import Counts, Parameters
from handler.sections.shown import Shown
from handler.sections.wording import ShapeWords, counted

# The outcomes' names on the cards (`Outcome`).
CARD_LABELS: Final = {outcome.key: outcome.label for outcome in Outcome}


class Card(msgspec.Struct, frozen=True):
    key: str
    label: str
    value: str
    detail: str
    caption: str  # what the card counts, with the thresholds of this run


def card_captions(iou_min: float, iou_perfect: float, words: ShapeWords) -> dict[str, str]:
    """Each outcome's definition (contract §6) in a few words, with the actual IoU bounds."""
    low, high = f"{iou_min:g}", f"{iou_perfect:g}"
    return {
        "correct": f"same class, IoU ≥ {high}",
        "shifted": f"same class, {low} ≤ IoU < {high}",
        "class_confused": f"other class, IoU ≥ {low}",
        "false_positive": f"kept prediction, no match at IoU ≥ {low}",
        "false_negative": f"ground-truth {words.one} nothing matched",
        "mean_iou": f"of same-class matches (IoU ≥ {low})",
    }


class _Drawn(Protocol):
    """What the outcome cards reads of the findings."""

    @property
    def counts(self) -> Counts: ...
    @property
    def parameters(self) -> Parameters: ...
    @property
    def mean_iou(self) -> float | None: ...
    @property
    def time(self) -> TimeSaved: ...


def cards(findings: _Drawn) -> list[Card]:
    counts, parameters = findings.counts, findings.parameters
    captions = card_captions(parameters.iou_min, parameters.iou_perfect, findings.time.words)
    total = counts.total
    result = [
        Card(
            key,
            label,
            f"{getattr(counts, key) / (total or 1):.1%}",
            f"{getattr(counts, key)} of {total}",
            captions[key],
        )
        for key, label in CARD_LABELS.items()
    ]
    mean_iou, matched = findings.mean_iou, counts.correct + counts.shifted
    value = "none" if mean_iou is None else f"{mean_iou:.3f}"
    result.append(
        Card("mean_iou", "Mean IoU", value, counted(matched, "pair", "pairs"), captions["mean_iou"])
    )
    return result


def outcome_cards(findings: _Drawn) -> dict[str, Any]:
    return {"cards": cards(findings)}


OutcomesSection = Annotated[Counts, Shown(feature="outcomes", draw=outcome_cards)]
