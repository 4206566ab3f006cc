"""What the findings sections are built from: the inputs, the datasets' names and the merged state."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import TypeVar

import msgspec
from msgspec import UNSET, UnsetType, field

from handler.datasets.loaded import DatasetNames
from handler.datasets.slices import SliceFile
from handler.engine.analyses.box_counts import BOX_COUNTS
from handler.engine.analyses.data_health import DATA_HEALTH
from handler.engine.analyses.per_image import PER_IMAGE
from handler.engine.bootstrap import Bootstrap, bootstrap
from handler.engine.crowded import PROBLEMS
from handler.engine.review import ReviewQueue, review_queue
from handler.engine.state import EvaluationState
from handler.engine.timecost import TimeCosts
from handler.inputs import NodeInputs
from handler.readings.verdict import Rescored
from handler.sections.wording import ShapeWords, shape_words

Data = TypeVar("Data")


class Beside(msgspec.Struct, frozen=True):
    """The merged run's costly Python work that no finisher's pass needs: done in a forked child
    while the report's code is imported and the pass runs (`forked.beside`)."""

    reading: Rescored | None  # another reading of the predictions that scores clearly better
    spread: Bootstrap | None  # `RunFacts.spread`

    @classmethod
    def of(cls, facts: RunFacts, search: Callable[[], Rescored | None]) -> Beside:
        """`search` run, and the spread of `facts` drawn."""
        return cls(search(), facts.spread)


def first_of(kind: type[Data], values: tuple[object, ...]) -> Data:
    """The first of `values` of this type; `kind()`, its empty value, when none is."""
    return next((value for value in values if isinstance(value, kind)), None) or kind()


class RunFacts(msgspec.Struct, frozen=True, dict=True):
    """Every section's builder reads this one object (the context of `Shown.build`)."""

    inputs: NodeInputs
    gt: DatasetNames
    pred: DatasetNames
    state: EvaluationState
    costs: TimeCosts = field(default_factory=TimeCosts)
    slices: SliceFile = field(default_factory=dict)  # slice name -> asset ids (`--slices`)
    finishers: tuple[object, ...] = ()  # the data the finishers gave (report/finishers/)
    reading: Rescored | None = None  # another reading of the predictions that scores clearly better
    drawn: Bootstrap | UnsetType | None = UNSET  # the spread, when drawn beside the run (`Beside`)

    def finished(self, kind: type[Data]) -> Data:
        """The data a finisher gave of this type; `kind()`, its empty value, when none did."""
        return first_of(kind, self.finishers)

    @property
    def words(self) -> ShapeWords:
        """The run's objects and actions as said: boxes, or masks when it prices masks."""
        return shape_words(self.costs.shape)

    @cached_property
    def reason(self) -> str | None:
        """Why nothing could be scored; None when something was."""
        if not self.state.of(BOX_COUNTS).images:
            return "the ground-truth and prediction datasets share no image assets"
        if self.state.tally.total == 0:
            skipped = self.state.of(DATA_HEALTH)
            reasons = {**skipped.gt_skip_reasons, **skipped.pred_skip_reasons}
            bound = next((problem for problem in PROBLEMS if problem in reasons), None)
            if bound is not None:
                return f"{self.words.every} left was {bound}, skipped"
            return f"no {self.words.many} were left on the shared images after the confidence filter"
        return None

    @cached_property
    def spread(self) -> Bootstrap | None:
        """The per-image bootstrap, once per run: the verdict and the uncertainty section share it."""
        if not isinstance(self.drawn, UnsetType):
            return self.drawn
        return None if self.reason is not None else bootstrap(self.state.of(PER_IMAGE).counts, self.costs)

    @cached_property
    def queue(self) -> ReviewQueue:
        """The review queue, once per run: `images_with_most_work` are its first rows."""
        return review_queue(self.state, self.costs)
