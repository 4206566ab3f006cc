"""`confusions` (the most frequent class confusions), shown with the boxes per labeler action (the
outcome counts under their actions' names: `counts`, not a field of their own)."""

from __future__ import annotations

from typing import Annotated, Any, Final, Protocol

from pydantic import Field

from handler.engine.analyses.confusions import CONFUSIONS, top_confusions
from handler.engine.timecost import ACTIONS
from handler.sections.context import RunFacts
from handler.sections.fields import Counts, Section
from handler.sections.shown import Shown

TOP_CONFUSIONS: Final = 10


class Confusion(Section):
    gt_class: str
    pred_class: str
    count: int = Field(ge=1)


def confusions(facts: RunFacts) -> tuple[Confusion, ...]:
    classes = facts.state.of(CONFUSIONS)
    found = top_confusions(classes.pairs, TOP_CONFUSIONS)
    columns = (found.gt_class.tolist(), found.pred_class.tolist(), found.count.tolist())
    return tuple(
        Confusion(gt_class=classes.names[g], pred_class=classes.names[p], count=n)
        for g, p, n in zip(*columns, strict=True)
    )


class _Drawn(Protocol):
    """What the actions' table reads of the findings."""

    @property
    def counts(self) -> Counts: ...


def action_counts(findings: _Drawn) -> dict[str, Any]:
    """The boxes per labeler action: accept correct, nudge shifted, relabel class-confused, delete
    FP, draw FN (the outcome counts, in the outcomes' order, which is the actions')."""
    return {"action_counts": dict(zip(ACTIONS, findings.counts.outcomes().values(), strict=True))}


ConfusionsSection = Annotated[
    tuple[Confusion, ...],
    Field(
        max_length=TOP_CONFUSIONS,
        description="The most frequent class confusions, GT class -> predicted class, most frequent first.",
    ),
    Shown(confusions, "actions", draw=action_counts),
]
