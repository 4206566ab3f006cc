"""Plan the shards of a run, map them over an executor, merge their states."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from functools import cache
from typing import Final

from handler.datasets import load_dataset, pair_datasets
from handler.datasets.builder import LISTED_SKIPS
from handler.datasets.folder import Folder
from handler.datasets.read_options import ClassNames, ReadOptions, Side, option_label, parse_names_file
from handler.engine import analyses
from handler.engine.state import EvaluationState, ReadFigures
from handler.errors import ExecutionError, InputError, StorageError, quoted
from handler.execution.executors import (
    SCHEDULER_VARIABLE,
    WORKERS_VARIABLE,
    Engine,
    Executor,
    choose_executor,
    workers_from,
)
from handler.execution.shards import (
    MIN_BOXES_PER_SHARD,
    SHARD_SUFFIX,
    FileShard,
    PairedShard,
    ShardResult,
    paired_shards,
    read_figures,
    run_file_shard,
    run_paired_shard,
)
from handler.forked import allowed_workers
from handler.inputs import NodeInputs
from handler.report.asset import chunk_key, discard_chunks
from handler.report.findings import DatasetNames
from handler.storage import Source, Store, open_source, open_store, resolve_dataset

NATIVE_LINES: Final = "native-jsonl"
# Shards per worker: a little more than one evens out shards of unequal cost.
SHARDS_PER_WORKER: Final = 2


@dataclass(frozen=True)
class ExecutionOptions:
    """`--workers` / PRELABEL_WORKERS and `--scheduler` / PRELABEL_DASK_SCHEDULER."""

    workers: int | None = None
    scheduler: str | None = None

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> ExecutionOptions:
        return cls(workers_from(environ.get(WORKERS_VARIABLE)), environ.get(SCHEDULER_VARIABLE) or None)


@dataclass(frozen=True)
class Evaluated:
    """The merged state of every shard, and how it was computed."""

    state: EvaluationState
    gt: DatasetNames
    pred: DatasetNames
    engine: Engine
    workers: int
    shards: int


@dataclass(frozen=True)
class ShardJob:
    """One shard and where its outcome lines go: picklable, for any executor."""

    task: PairedShard | FileShard
    store_uri: str
    key: str


@cache
def _store(uri: str) -> Store:
    """One store per process (an S3 client is built once per worker, not per shard)."""
    return open_store(uri)


def run_shard(job: ShardJob) -> EvaluationState:
    """The mapped function: evaluate a shard, write its outcome lines, return its state."""
    task = job.task
    result: ShardResult = run_paired_shard(task) if isinstance(task, PairedShard) else run_file_shard(task)
    _store(job.store_uri).put(job.key, result.outcome_lines, "application/x-ndjson")
    return result.state


def _shard_pairs(gt: Source, pred: Source, inputs: NodeInputs) -> list[tuple[Source, Source]] | None:
    """Folders of JSONL shards with the same file names on both sides: shard i of each holds the
    same assets, so a worker can read and pair them on its own."""
    forced = {inputs.gt_format, inputs.pred_format} - {None, "native", NATIVE_LINES}
    # Read options are refused by the native reader, on the driver, with the option named.
    options = (inputs.gt_names, inputs.pred_names, inputs.gt_layout, inputs.pred_layout)
    if forced or any(option is not None for option in options) or not (gt.is_dir() and pred.is_dir()):
        return None
    gt_shards, pred_shards = Folder.of(gt).shards(SHARD_SUFFIX), Folder.of(pred).shards(SHARD_SUFFIX)
    if len(gt_shards) < 2 or [s.basename for s in gt_shards] != [s.basename for s in pred_shards]:
        return None
    return list(zip(gt_shards, pred_shards, strict=True))


def _names_file(key: str, reference: str) -> ClassNames:
    try:
        content = open_source(reference).read_bytes()
    except (StorageError, OSError) as error:
        raise InputError(f"{option_label(key)}: {quoted(reference)}: cannot read it ({error})") from None
    return parse_names_file(key, reference, content)


def read_options(inputs: NodeInputs, side: Side) -> ReadOptions:
    """The class names and column layout given for one side (GT_NAMES, PRED_LAYOUT, ...)."""
    names, layout = (
        (inputs.gt_names, inputs.gt_layout) if side == "gt" else (inputs.pred_names, inputs.pred_layout)
    )
    key = f"{side.upper()}_NAMES"
    return ReadOptions(side, None if names is None else _names_file(key, names), layout)


def _executor(options: ExecutionOptions, boxes: int) -> Executor:
    return choose_executor(options.workers, options.scheduler, boxes, MIN_BOXES_PER_SHARD)


@dataclass(frozen=True)
class ShardPlan:
    """The shards of a run, where they run, the datasets' names for the report, and what the
    driver found reading the datasets (nothing when the workers read shard files)."""

    tasks: list[PairedShard | FileShard]
    executor: Executor
    gt: DatasetNames
    pred: DatasetNames
    read: ReadFigures


def plan_shards(inputs: NodeInputs, store: Store, options: ExecutionOptions) -> ShardPlan:
    """Shard files that workers read themselves, or both datasets read here and cut into shards."""
    gt_source = resolve_dataset(inputs.gt_dataset, store)
    pred_source = resolve_dataset(inputs.pred_dataset, store)
    pairs = _shard_pairs(gt_source, pred_source, inputs)
    registered = analyses.ANALYSES  # read at plan time: a test may register one more
    if pairs is not None:
        files: list[PairedShard | FileShard] = [
            FileShard(i, gt.name, pred.name, inputs.thresholds, LISTED_SKIPS, registered)
            for i, (gt, pred) in enumerate(pairs)
        ]
        executor = _executor(options, MIN_BOXES_PER_SHARD * len(pairs))
        return ShardPlan(
            files,
            executor,
            DatasetNames(gt_source.name, NATIVE_LINES),
            DatasetNames(pred_source.name, NATIVE_LINES),
            ReadFigures(),
        )
    with allowed_workers(options.workers):  # a big file is decoded on that many processes
        gt = load_dataset(gt_source, inputs.gt_format, None, read_options(inputs, "gt"))
        pred = load_dataset(pred_source, inputs.pred_format, gt, read_options(inputs, "pred"))
    paired = pair_datasets(gt.dataset, pred.dataset)
    executor = _executor(options, len(paired.gt) + len(paired.pred))
    shards = 1 if executor.workers == 1 else SHARDS_PER_WORKER * executor.workers
    ranges = paired_shards(paired, inputs.thresholds, shards, registered)
    return ShardPlan(
        list(ranges),
        executor,
        DatasetNames(gt.dataset.source, gt.dataset.format),
        DatasetNames(pred.dataset.source, pred.dataset.format),
        read_figures(paired, gt.dataset, pred.dataset, 0, LISTED_SKIPS),
    )


def _merged(states: Iterator[EvaluationState]) -> EvaluationState:
    """Merge as the states come: only one partial state is held besides the running total."""
    merged = next(states)
    for state in states:
        merged = merged + state
    return merged


def evaluate_plan(plan: ShardPlan, store: Store, report_id: str) -> Evaluated:
    """Match and score every shard; their outcome lines are written as chunks of the report."""
    jobs = [
        ShardJob(task, store.uri, chunk_key(report_id, "outcomes", i)) for i, task in enumerate(plan.tasks)
    ]
    try:
        state = _merged(plan.executor.map(run_shard, jobs)).adding(plan.read)
    except BrokenProcessPool:
        discard_chunks(store, report_id, "outcomes", len(jobs))
        raise ExecutionError(
            "a worker process died while evaluating a shard; no report was published"
        ) from None
    except BaseException:
        discard_chunks(store, report_id, "outcomes", len(jobs))
        raise
    return Evaluated(state, plan.gt, plan.pred, plan.executor.engine, plan.executor.workers, len(jobs))
