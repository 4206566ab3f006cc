"""What a finisher plugs into: work done once the shards are merged (the registry and how to add
one: handler/report/finishers/__init__.py).

A finisher declares what it needs (`needs`): the merged state only (`MERGED`), an extra exact pass
over the images it chooses from the merged state (`ExactPass`), or the built findings (`FINDINGS`).
It returns report parts (files stored with the report, each declared up front in `parts`) and/or
data for the findings sections (a section reads it with `facts.finished(Kind)`). The pipeline runs
them all: first those on the merged state and the pass (ONE pass over the union of their images),
then those that are a `phase` of their own (timed apart: drawing the images), then the findings
are built with their data, then those on the findings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import Final, Literal, TypeVar

import msgspec
from msgspec import field

from handler.datasets.loaded import DatasetNames
from handler.datasets.slices import SliceFile
from handler.engine.policy import Policy, policy_of
from handler.engine.state import EvaluationState
from handler.engine.timecost import TimeCosts
from handler.execution.image_pass import ImagePass, image_pass
from handler.execution.run import ShardPlan
from handler.forked import Pending
from handler.inputs import NodeInputs
from handler.readings.verdict import Rescored
from handler.sections.context import Beside, Data, RunFacts, first_of
from handler.sections.fields import Section
from handler.sections.parts import ReportPart
from handler.storage import Content


class Merged(msgspec.Struct, frozen=True, dict=True):
    """What every finisher reads: the run's inputs and costs, both datasets' names, the merged state."""

    inputs: NodeInputs
    costs: TimeCosts
    gt: DatasetNames
    pred: DatasetNames
    state: EvaluationState
    # The search for another reading and the spread, done beside the finishers on the merged state
    # (`forked.beside`): `reading` and `facts` wait for them.
    beside: Pending[Beside]

    @property
    def reading(self) -> Rescored | None:
        """Another reading of the predictions that scores clearly better; None if none."""
        return self.beside.result().reading

    @cached_property
    def policy(self) -> Policy:
        """The recommended policy over the merged state, made once for every finisher that reads it."""
        return policy_of(self.state, self.inputs.confidence.value, self.costs)

    def facts(self, slices: SliceFile, finished: FinishedRun) -> RunFacts:
        """What every section is built from: this run, the slices scored apart, the finishers' data."""
        done = self.beside.result()
        return RunFacts(
            self.inputs,
            self.gt,
            self.pred,
            self.state,
            self.costs,
            slices,
            finished.data,
            done.reading,
            done.spread,
        )


class ExactPass(msgspec.Struct, frozen=True):
    """An extra exact pass over the images `choose` picks (asset ids) from the merged state; the
    finisher gets their paired boxes and evaluation (`Finishing.images`)."""

    choose: Callable[[Merged], frozenset[str]]


Built = TypeVar("Built", bound=Section)
MERGED: Final = "merged state"
FINDINGS: Final = "findings"
Needs = ExactPass | Literal["merged state", "findings"]


class Finishing(msgspec.Struct, frozen=True):
    """A finisher's input: the merged run, and what its `needs` asked for besides."""

    merged: Merged
    chosen: frozenset[str] = frozenset()  # ExactPass: the asset ids it chose
    # ExactPass: the one pass over every finisher's images; its own are `images.images(chosen)`.
    images: ImagePass = field(default_factory=ImagePass)
    findings: Section | None = None  # FINDINGS: the findings, built
    page: Mapping[str, object] = field(default_factory=dict)  # FINDINGS: the features' page-only data

    def built(self, kind: type[Built]) -> Built:
        """The built findings, of the registry's model `kind`, for a finisher that needs FINDINGS."""
        if self.findings is None:
            raise ValueError("only a finisher that needs FINDINGS runs after the findings are built")
        if not isinstance(self.findings, kind):
            raise TypeError(f"the findings are a {type(self.findings).__name__}, not a {kind.__name__}")
        return self.findings


class Finished(msgspec.Struct, frozen=True):
    """A finisher's output: its parts (of those it declared) and its data for the findings."""

    parts: Mapping[ReportPart, Content] = field(default_factory=dict)
    data: object = None


class Finisher(msgspec.Struct, frozen=True):
    """One finisher: its name, what it needs, the parts it may write, and the function that runs it.

    `finish` is a module-level function of `Finishing`; `parts` are every part it may return (the
    report's parts are known without running a finisher: `show` reads them by key). A finisher
    with a `phase` (one of the pipeline's PHASES) runs in that phase, so its time is its own."""

    name: str
    needs: Needs
    finish: Callable[[Finishing], Finished]
    parts: tuple[ReportPart, ...] = ()
    phase: str | None = None


class FinishedRun(msgspec.Struct, frozen=True):
    """The data for the findings (one value per finisher that gave one) and the parts so far."""

    data: tuple[object, ...]
    parts: dict[ReportPart, Content]

    def __add__(self, other: FinishedRun) -> FinishedRun:
        """Both passes' data and parts: a part of any pass is stored with the report."""
        return FinishedRun((*self.data, *other.data), {**self.parts, **other.parts})

    def of(self, kind: type[Data]) -> Data:
        """The data a finisher gave of this type; `kind()`, its empty value, when none did."""
        return first_of(kind, self.data)


def _checked(finisher: Finisher, finished: Finished) -> Finished:
    undeclared = set(finished.parts) - set(finisher.parts)
    if undeclared:
        keys = sorted(part.key for part in undeclared)
        raise KeyError(f"finisher {finisher.name!r} wrote parts it did not declare: {keys}")
    return finished


def finish_merged(
    finishers: Sequence[Finisher], merged: Merged, plan: ShardPlan, phase: str | None = None
) -> FinishedRun:
    """Run the finishers of `phase` (None: those of none) on the merged state and on the pass:
    one pass over all their images."""
    finishers = [f for f in finishers if f.phase == phase]
    chosen = {f.name: f.needs.choose(merged) for f in finishers if isinstance(f.needs, ExactPass)}
    images = image_pass(plan, merged.state, frozenset(i for ids in chosen.values() for i in ids))
    done = [
        _checked(f, f.finish(Finishing(merged, chosen.get(f.name, frozenset()), images)))
        for f in finishers
        if f.needs != FINDINGS
    ]
    return FinishedRun(
        tuple(d.data for d in done if d.data is not None), {k: v for d in done for k, v in d.parts.items()}
    )


def finish_findings(
    finishers: Sequence[Finisher], merged: Merged, findings: Section, page: Mapping[str, object]
) -> dict[ReportPart, Content]:
    """Run the finishers on the findings (and the page's drawing data): their parts."""
    done = [
        _checked(f, f.finish(Finishing(merged, findings=findings, page=page)))
        for f in finishers
        if f.needs == FINDINGS
    ]
    return {part: content for d in done for part, content in d.parts.items()}
