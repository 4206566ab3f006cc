"""Plan the shards of a run, map them over an executor, merge their states."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from typing import Final

import msgspec

from handler.datasets import pair_datasets, shard_format, shards_readable
from handler.datasets.builder import LISTED_SKIPS
from handler.datasets.folder import Folder
from handler.datasets.loaded import DatasetNames
from handler.datasets.pairing import ScoreOn
from handler.datasets.side import OpenSide, open_side
from handler.engine import Thresholds
from handler.engine.npz_chunks import StreamedChunk
from handler.engine.state import EvaluationState, ReadFigures
from handler.errors import ExecutionError
from handler.execution.executors import (
    SCHEDULER_VARIABLE,
    WORKERS_VARIABLE,
    Engine,
    Executor,
    InProcess,
    choose_executor,
    workers_from,
)
from handler.execution.shards import (
    SHARD_SUFFIX,
    Analyses,
    FileShard,
    PairedShard,
    ShardResult,
    paired_shards,
    read_figures,
    run_file_shard,
    run_paired_shard,
)
from handler.forked import broken_pool
from handler.inputs import NodeInputs
from handler.readings.sides import ReadSides, read_sides
from handler.storage import ObjectSink, Source, Store, WrittenObject
from handler.storage.base import SizedContent

# Local processes are forked once the input has this many boxes (GT and predictions) per core. A
# worker costs CPU (fresh pages, a cold cache, its results sent back) that the shards' kernels no
# longer repay at the 5k workload on two shared cores (bench/RESULTS.md); idle cores break even lower.
MIN_BOXES_PER_WORKER: Final = 250_000
# Shards per worker: a little more than one evens out shards of unequal cost.
SHARDS_PER_WORKER: Final = 2
# Boxes (GT and predictions) per shard at most, however many workers: a shard's columns and
# temporaries then stay small enough for the allocator to reuse instead of faulting in fresh
# pages.
MAX_BOXES_PER_SHARD: Final = 400_000


class ExecutionOptions(msgspec.Struct, frozen=True):
    """`--workers` / PRELABEL_WORKERS and `--scheduler` / PRELABEL_DASK_SCHEDULER."""

    workers: int | None = None
    scheduler: str | None = None

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> ExecutionOptions:
        return cls(workers_from(environ.get(WORKERS_VARIABLE)), environ.get(SCHEDULER_VARIABLE) or None)


class Evaluated(msgspec.Struct, frozen=True):
    """The merged state of every shard, how it was computed, and the ledger and pre-label chunks
    written."""

    state: EvaluationState
    gt: DatasetNames
    pred: DatasetNames
    engine: Engine
    workers: int
    shards: int
    ledger_chunks: tuple[WrittenObject, ...]
    pre_label_chunks: tuple[WrittenObject, ...] = ()


class ShardJob(msgspec.Struct, frozen=True):
    """One shard and where its ledger chunk and pre-label candidates go (nowhere: None):
    picklable, for any executor."""

    task: PairedShard | FileShard
    sink: ObjectSink | None
    pre_labels: ObjectSink | None = None


class ShardOutput(msgspec.Struct, frozen=True):
    """What comes back from a worker: the shard's state and the chunks it wrote."""

    state: EvaluationState
    written: WrittenObject | None
    pre_labels_written: WrittenObject | None = None


# How a shard's chunk gets to its sink: written there and then (`ObjectSink.write`), or handed to
# another thread (`writing_behind`); what was, or will be, written either way.
ChunkWrite = Callable[[ObjectSink, bytes | SizedContent], WrittenObject]


def run_shard(
    job: ShardJob, write: ChunkWrite = ObjectSink.write, write_pre_labels: ChunkWrite = ObjectSink.write
) -> ShardOutput:
    """The mapped function: evaluate a shard, write its ledger chunk and pre-label candidates,
    return its state."""
    task = job.task
    result: ShardResult = run_paired_shard(task) if isinstance(task, PairedShard) else run_file_shard(task)
    return ShardOutput(
        result.state,
        write(job.sink, result.ledger) if job.sink else None,
        write_pre_labels(job.pre_labels, result.pre_labels) if job.pre_labels else None,
    )


class HeldChunks:
    """Chunks kept in this process instead of written, until they are edited (the pre-label
    candidates of shards run here, trimmed once the recommendation is known): written once, not
    written, read back and written again. `write` is a `ChunkWrite` (a chunk given as bytes is
    written at once)."""

    def __init__(self) -> None:
        self.contents: dict[str, StreamedChunk] = {}

    def write(self, sink: ObjectSink, content: bytes | SizedContent) -> WrittenObject:
        if not isinstance(content, StreamedChunk):
            return sink.write(content)
        self.contents[sink.key] = content
        return sink.written(content)


@contextmanager
def writing_behind() -> Iterator[ChunkWrite]:
    """A `ChunkWrite` that hands each chunk to one writing thread and says at once what it writes:
    the chunks' checksums and files (which release the GIL) on the second core while this thread
    goes on. The block ends once every chunk is written (the first failure raised); a block that
    fails drops the chunks not yet started and waits for the one being written."""
    pending: list[Future[WrittenObject]] = []

    def write(sink: ObjectSink, content: bytes | SizedContent) -> WrittenObject:
        pending.append(writer.submit(sink.write, content))
        return sink.written(content)

    with ThreadPoolExecutor(1) as writer:
        try:
            yield write
        except BaseException:
            writer.shutdown(cancel_futures=True)
            raise
        for written in pending:
            written.result()


def _shard_pairs(gt: OpenSide, pred: OpenSide) -> list[tuple[Source, Source]] | None:
    """Folders of JSONL shards with the same file names on both sides: shard i of each holds the
    same assets, so a worker can read and pair them on its own."""
    # Read options are refused by the native reader, on the driver, with the option named.
    readable = all(shards_readable(side.spec.format) and not side.options.given() for side in (gt, pred))
    if not readable or not (gt.source.is_dir() and pred.source.is_dir()):
        return None
    gt_shards = Folder.of(gt.source).shards(SHARD_SUFFIX)
    pred_shards = Folder.of(pred.source).shards(SHARD_SUFFIX)
    if len(gt_shards) < 2 or [s.basename for s in gt_shards] != [s.basename for s in pred_shards]:
        return None
    return list(zip(gt_shards, pred_shards, strict=True))


def _shard_count(workers: int, boxes: int) -> int:
    """SHARDS_PER_WORKER per worker (one in this process), more when they would be too big."""
    return max(1 if workers == 1 else SHARDS_PER_WORKER * workers, -(-boxes // MAX_BOXES_PER_SHARD))


def _executor(options: ExecutionOptions, boxes: int) -> Executor:
    return choose_executor(options.workers, options.scheduler, boxes, MIN_BOXES_PER_WORKER)


class ShardPlan(msgspec.Struct, frozen=True):
    """The shards of a run, where they run, the datasets' names for the report, and what the
    driver found reading the datasets (nothing when the workers read shard files)."""

    tasks: list[PairedShard | FileShard]
    executor: Executor
    gt: DatasetNames
    pred: DatasetNames
    read: ReadFigures
    sides: ReadSides | None = None  # None when the workers read shard files


def read_both(gt: OpenSide, pred: OpenSide, score_on: ScoreOn = "auto") -> ReadSides:
    """Both sides loaded by their formats (the predictions against the GT; a big file decoded on the
    processes each side was opened with), then read again as their options say (`handler.readings`)."""
    return read_sides(gt.loaded, gt.options, pred.loaded_against(gt), pred.options, score_on)


def read_and_plan(
    inputs: NodeInputs, store: Store, options: ExecutionOptions, analyses: Analyses
) -> ShardPlan:
    """The node's plan: both sides opened (`open_side`) and planned by `plan_sides`."""
    gt, pred = open_side(inputs.gt, store, options.workers), open_side(inputs.pred, store, options.workers)
    return plan_sides(gt, pred, inputs.thresholds, options, analyses, inputs.score_on)


def plan_sides(
    gt: OpenSide,
    pred: OpenSide,
    thresholds: Thresholds,
    options: ExecutionOptions,
    analyses: Analyses,
    score_on: ScoreOn = "auto",
) -> ShardPlan:
    """Shard files that workers read themselves, or both sides read here and cut into shards.

    The shards run `analyses`: the caller's registry (handler.features.ANALYSES, and compare's
    `COMPARE_ONLY`), since the features sit above the execution.
    The GT is read once per `OpenSide` (`OpenSide.loaded`): compare plans two prediction sets
    against one.
    """
    pairs = _shard_pairs(gt, pred)
    if pairs is not None:
        files: list[PairedShard | FileShard] = [
            FileShard(i, gt_shard.name, pred_shard.name, thresholds, LISTED_SKIPS, analyses)
            for i, (gt_shard, pred_shard) in enumerate(pairs)
        ]
        executor = _executor(options, MIN_BOXES_PER_WORKER * len(pairs))  # a shard file is worth a worker
        # Read as written, the format first as every reading names it.
        as_written = (shard_format().name, "shards, as written")
        return ShardPlan(
            files,
            executor,
            DatasetNames(gt.source.name, shard_format().name, as_written),
            DatasetNames(pred.source.name, shard_format().name, as_written),
            ReadFigures(),
        )
    sides = read_both(gt, pred, score_on)
    gt_dataset, pred_dataset = sides.gt, sides.pred
    paired = pair_datasets(gt_dataset, pred_dataset)
    boxes = len(paired.gt) + len(paired.pred)
    executor = _executor(options, boxes)
    ranges = paired_shards(paired, thresholds, _shard_count(executor.workers, boxes), analyses)
    return ShardPlan(
        list(ranges),
        executor,
        sides.gt_names,
        sides.pred_names,
        read_figures(paired, gt_dataset, pred_dataset, 0, LISTED_SKIPS),
        sides,
    )


Written = tuple[WrittenObject, ...]


def _merged(outputs: Iterator[ShardOutput]) -> tuple[EvaluationState, Written, Written]:
    """Merge as the states come: only one partial state is held besides the running total."""
    first = next(outputs)
    merged, written = first.state, [(first.written, first.pre_labels_written)]
    for output in outputs:
        merged = merged + output.state
        written.append((output.written, output.pre_labels_written))
    outcomes, pre_labels = zip(*written, strict=True)
    return merged, tuple(o for o in outcomes if o is not None), tuple(p for p in pre_labels if p is not None)


def evaluate_plan(
    plan: ShardPlan,
    sinks: Sequence[ObjectSink] | None,
    pre_label_sinks: Sequence[ObjectSink] = (),
    write: ChunkWrite = ObjectSink.write,
    write_pre_labels: ChunkWrite | None = None,
) -> Evaluated:
    """Match and score every shard; shard i writes its ledger chunk to `sinks[i]` and its
    pre-label candidates to `pre_label_sinks[i]` (none given: not kept), by `write` (the
    candidates by `write_pre_labels`, else alike) when the shards run in this process (a worker
    writes its own). Cleaning up after a failure is the caller's staging's business."""
    jobs = [
        ShardJob(task, sinks[i] if sinks else None, pre_label_sinks[i] if pre_label_sinks else None)
        for i, task in enumerate(plan.tasks)
    ]
    try:
        here = partial(run_shard, write=write, write_pre_labels=write_pre_labels or write)
        shard = here if isinstance(plan.executor, InProcess) else run_shard
        merged, written, pre_labels = _merged(plan.executor.map(shard, jobs))
        state = merged.adding(plan.read)
    except broken_pool():
        raise ExecutionError(
            "a worker process died while evaluating a shard; no report was published"
        ) from None
    executor = plan.executor
    return Evaluated(
        state, plan.gt, plan.pred, executor.engine, executor.workers, len(jobs), written, pre_labels
    )
