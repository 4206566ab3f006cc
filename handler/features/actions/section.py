"""`actions` (boxes per labeler action) and `confusions` (the most frequent class confusions)."""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import Field

from handler.engine.analyses.confusions import CONFUSIONS, top_confusions
from handler.engine.timecost import ACTIONS
from handler.sections.context import RunFacts
from handler.sections.fields import Count, Section
from handler.sections.shown import Shown

TOP_CONFUSIONS: Final = 10


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


def actions(facts: RunFacts) -> Actions:
    return Actions(**dict(zip(ACTIONS, facts.state.tally.counts.tolist(), strict=True)))


def confusions(facts: RunFacts) -> tuple[Confusion, ...]:
    classes = facts.state.of(CONFUSIONS)
    found = top_confusions(classes.pairs, TOP_CONFUSIONS)
    columns = (found.gt_class.tolist(), found.pred_class.tolist(), found.count.tolist())
    return tuple(
        Confusion(gt_class=classes.names[g], pred_class=classes.names[p], count=n)
        for g, p, n in zip(*columns, strict=True)
    )


ActionsSection = Annotated[Actions, Shown(actions, "actions")]
# Shown in the actions fragment.
ConfusionsSection = Annotated[
    tuple[Confusion, ...],
    Field(
        max_length=TOP_CONFUSIONS,
        description="The most frequent class confusions, GT class -> predicted class, most frequent first.",
    ),
    Shown(confusions),
]
