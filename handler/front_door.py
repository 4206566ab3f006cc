"""The one front door: the node (`pipeline.run`), the CLI (its `run` and `compare`), `compare`, the
Python metric and the mmeval metric all go through a `FrontDoor`, as mmeval's BaseMetric runs:
`process` what was given into the engine's mergeable state, then `compute` the result from it.

What is given is per-image records (the metrics' `add`: `process`) or two datasets: read, planned
into shards (`read`, or `read_against` for sides already open: compare's one GT) and evaluated
shard by shard, their states merged exactly (`process_plan`); the node's run then searches the
other readings (`process_run`). `compute` turns a tally into the metrics' result,
`compute_findings` a run into the report's findings. No entry point calls a step of the flow
itself (tests/project/test_architecture.py).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np
from msgspec import field

from handler.boxes import BoxTable
from handler.datasets import PairedBoxes, pair_datasets
from handler.datasets.loaded import DatasetNames
from handler.datasets.pairing import ScoreOn
from handler.datasets.side import OpenSide, SideSpec, open_side
from handler.datasets.slices import SliceFile
from handler.engine import Evaluation, Tally, Thresholds, evaluate
from handler.engine.crowded import crowded_images, off_images
from handler.engine.timecost import TimeCosts
from handler.errors import quoted
from handler.execution import Evaluated, ExecutionOptions, ShardPlan
from handler.execution.run import (
    ChunkWrite,
    evaluate_plan,
    plan_sides,
    read_and_plan,
    read_both,
)
from handler.execution.shards import Analyses
from handler.forked import Pending, beside, worker_count
from handler.inputs import NodeInputs, arguments
from handler.inputs.arguments import Batch

# The report's models come by its lazy face, loaded when a result is computed: the node imports
# them while its read's workers decode (`pipeline`), not before the read starts.
from handler.report import findings
from handler.sections.context import Beside, RunFacts
from handler.storage import ObjectSink, Store

if TYPE_CHECKING:
    from handler.report.findings import EfficiencyResult, Findings, Merged
    from handler.sections.finishing import FinishedRun

ImageRecord = Mapping[str, Any]


class ProcessedRun(msgspec.Struct, frozen=True, dict=True):
    """A node run's datasets processed: its shards merged (how they ran, the chunks they wrote), and
    what its finishers and sections read (`Merged`, made when first read: it is the report's code,
    which the node imports while the search for other readings runs beside)."""

    evaluated: Evaluated
    inputs: NodeInputs
    costs: TimeCosts
    beside: Pending[Beside]

    @cached_property
    def merged(self) -> Merged:
        evaluated = self.evaluated
        return findings.Merged(
            self.inputs, self.costs, evaluated.gt, evaluated.pred, evaluated.state, self.beside
        )


class FrontDoor(msgspec.Struct, frozen=True):
    """The one way in: the thresholds, the labeler's seconds, where the shards run and what is
    scored (boxes or masks), held once; `process` what was given, then `compute` the result.
    Built from the metrics' arguments (`of`, checked) or from the node's inputs (`of_inputs`)."""

    thresholds: Thresholds
    time_costs: TimeCosts = field(default_factory=TimeCosts)
    execution: ExecutionOptions = field(default_factory=ExecutionOptions)
    score_on: ScoreOn = "auto"

    @classmethod
    def of(cls, iou_min: Any, iou_perfect: Any, confidence_threshold: Any, time_costs: Any) -> FrontDoor:
        """Thresholds held to node.json's options like the node's inputs; the default seconds."""
        costs = arguments.instance("time_costs", time_costs, (TimeCosts, type(None)), "a TimeCosts or None")
        return cls(arguments.thresholds(iou_min, iou_perfect, confidence_threshold), costs or TimeCosts())

    @classmethod
    def of_inputs(
        cls, inputs: NodeInputs, costs: TimeCosts | None = None, execution: ExecutionOptions | None = None
    ) -> FrontDoor:
        """The node's inputs; `costs` given win over the inputs' TIME_COSTS file, else the defaults."""
        return cls(
            inputs.thresholds,
            costs or inputs.time_costs or TimeCosts(),
            execution or ExecutionOptions(),
            inputs.score_on,
        )

    # --- process: what was given → the engine's mergeable state

    def process(
        self,
        predictions: Sequence[ImageRecord],
        groundtruths: Sequence[ImageRecord],
        dataset_meta: Mapping[str, Any] | None = None,
    ) -> Evaluation:
        """One engine call over a batch of per-image records (image i = record i); the boxes the
        checks skip and the crowded images left out are each said in a warning to the caller."""
        batch = arguments.records(predictions, groundtruths, arguments.class_names(dataset_meta)[1])
        if batch.skipped:
            warnings.warn(f"boxes skipped: {batch.skipped}", UserWarning, stacklevel=3)
        gt, pred = _tables(batch)
        images = len(groundtruths)
        crowded = crowded_images(gt, pred, images)
        if len(crowded):
            records = [f"record {image}" for image in crowded.images.tolist()]
            warn_crowded(list(zip(records, crowded.reasons, strict=True)))
            gt, pred = off_images(gt, crowded.images), off_images(pred, crowded.images)
        return evaluate(gt, pred, images, self.thresholds)

    def process_datasets(self, gt: SideSpec, pred: SideSpec, store: Store) -> Evaluation:
        """Two datasets, read and paired as the node does, evaluated as box tables in one call."""
        paired = read_paired(gt, pred, store)
        return evaluate(paired.gt, paired.pred, len(paired.asset_ids), self.thresholds)

    def read(self, inputs: NodeInputs, store: Store, analyses: Analyses) -> ShardPlan:
        """The node's two sides opened, read and cut into shards that run `analyses`."""
        return read_and_plan(inputs, store, self.execution, analyses)

    def read_against(self, gt: OpenSide, pred: OpenSide, analyses: Analyses) -> ShardPlan:
        """`read` of sides already open: compare reads two prediction sets against one GT."""
        return plan_sides(gt, pred, self.thresholds, self.execution, analyses, self.score_on)

    def process_plan(
        self,
        plan: ShardPlan,
        sinks: Sequence[ObjectSink] | None = None,
        pre_label_sinks: Sequence[ObjectSink] = (),
        write: ChunkWrite = ObjectSink.write,
        write_pre_labels: ChunkWrite | None = None,
    ) -> Evaluated:
        """Every shard evaluated, its ledger and pre-label chunks written to the sinks given (by
        `write`), the states merged exactly."""
        return evaluate_plan(plan, sinks, pre_label_sinks, write, write_pre_labels)

    def process_run(
        self,
        inputs: NodeInputs,
        plan: ShardPlan,
        sinks: Sequence[ObjectSink] | None = None,
        pre_label_sinks: Sequence[ObjectSink] = (),
        write: ChunkWrite = ObjectSink.write,
        write_pre_labels: ChunkWrite | None = None,
    ) -> ProcessedRun:
        """`process_plan` (its chunks written by `write`: the node's are written behind, while
        the report's code is imported and its finishers run), then, beside what follows, another
        reading of the predictions that scores clearly better searched on the sides the plan read
        and the spread drawn: what the node's finishers and sections read."""
        evaluated = self.process_plan(plan, sinks, pre_label_sinks, write, write_pre_labels)
        costs = self.costs_on(evaluated.gt, evaluated.pred)
        facts = RunFacts(inputs, evaluated.gt, evaluated.pred, evaluated.state, costs)
        sides = plan.sides
        search = partial(sides.best_reading, evaluated.state, self.thresholds) if sides else _none
        # Unless the run stays one process: then each is done when first read.
        work = beside(partial(Beside.of, facts, search), fork=worker_count(self.execution.workers) > 1)
        return ProcessedRun(evaluated, inputs, costs, work)

    # --- compute: the merged state → the result

    def costs_on(self, *datasets: DatasetNames) -> TimeCosts:
        """The labeler's seconds for these datasets: a mask's when every one was scored on masks."""
        return self.time_costs.on_masks() if all(d.masks for d in datasets) else self.time_costs

    def compute(self, tally: Tally, on_masks: bool = False) -> EfficiencyResult:
        """The metrics' result of a tally; its time at a mask's seconds when its pairs were masks
        (`scored_on_masks`), as the node prices them."""
        return findings.EfficiencyResult.of(
            tally, self.time_costs.on_masks() if on_masks else self.time_costs
        )

    def compute_findings(
        self, run: ProcessedRun, finished: FinishedRun, slices: SliceFile, report_id: str
    ) -> tuple[Findings, Mapping[str, object]]:
        """The report's findings of a processed run (with the finishers' data), and the features'
        drawing data the page gets besides them."""
        facts = run.merged.facts(slices, finished)
        evaluated = run.evaluated
        ran = findings.Execution(engine=evaluated.engine, workers=evaluated.workers, shards=evaluated.shards)
        built = findings.build_findings(facts, report_id, ran)
        return built, findings.page_values(type(built), facts)


def scored_on_masks(evaluation: Evaluation) -> bool:
    """Whether a batch's pairs were measured by their masks (every record gave masks)."""
    return evaluation.gt.masks is not None


def _tables(batch: Batch) -> tuple[BoxTable, BoxTable]:
    """Checked records → two box tables with image = record index and one shared class space;
    the boxes the checks skipped are left out (their positions kept as source indices)."""
    _, class_id = np.unique(batch.labels, return_inverse=True)
    boxes = BoxTable.build(batch.xyxy, class_id, batch.image, confidence=batch.scores, masks=batch.masks)
    boxes = boxes.with_columns(source_index=np.r_[np.arange(batch.n_gt), np.arange(len(boxes) - batch.n_gt)])
    gt, pred = boxes[: batch.n_gt], boxes[batch.n_gt :]
    return gt[batch.keep[: batch.n_gt]], pred[batch.keep[batch.n_gt :]]


def read_paired(gt: SideSpec, pred: SideSpec, store: Store) -> PairedBoxes:
    """Two sides opened, read and paired as the node does."""
    sides = read_both(open_side(gt, store), open_side(pred, store))
    paired = pair_datasets(sides.gt, sides.pred)
    warn_crowded([(f"asset {quoted(image.asset_id)}", image.reason) for image in paired.crowded])
    return paired


def warn_crowded(images: list[tuple[str, str]]) -> None:
    """What the node lists as skipped, said by a Python caller's warning per bound broken (none:
    nothing): the images by name or record, and the bound."""
    for reason in dict.fromkeys(reason for _, reason in images):
        named = [image for image, why in images if why == reason]
        listed = ", ".join(named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
        warnings.warn(f"{listed}: its boxes are {reason}: skipped", UserWarning, stacklevel=3)


def _none() -> None:
    """No search: the workers read the shard files, and no sides were kept to search."""
