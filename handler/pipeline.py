"""The node's one code path: inputs → datasets → engine → report → storage → outputs, through the
front door (`FrontDoor`: read, process, compute), the report's finishers run and the report published."""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

import msgspec

from handler import features
from handler.datasets.jsondoc import gc_paused
from handler.datasets.slices import SliceFile
from handler.engine.pre_label_boxes import trimmed
from handler.engine.timecost import TimeCosts
from handler.execution import ExecutionOptions
from handler.execution.run import HeldChunks, writing_behind
from handler.forked import meanwhile, trim_heap
from handler.front_door import FrontDoor
from handler.images.pictures import DRAW_IMAGES
from handler.images.source import given_root
from handler.inputs import IMAGES_KEY, NodeInputs
from handler.outputs import NodeOutputs
from handler.storage import Store

if TYPE_CHECKING:
    from handler.report.findings import Findings

PhaseLog = Callable[[str, float], None]
# The phases of `run`, in order (a progress display counts them).
PHASES: Final = ("read datasets", "match and score", DRAW_IMAGES, "build report", "store report")


@runtime_checkable
class PhaseWatcher(Protocol):
    """A PhaseLog that also wants to know when a phase starts (a progress display)."""

    def start(self, phase: str) -> None: ...


LOGGER = logging.getLogger("prelabel")


def log_to_stderr(phase: str, seconds: float) -> None:
    """A PhaseLog of records on the "prelabel" logger (the entry points send it to stderr)."""
    LOGGER.info("%s: %.2f s", phase, seconds)


def quiet(phase: str, seconds: float) -> None:
    """A PhaseLog that says nothing."""


@contextmanager
def _phase(name: str, log: PhaseLog, settle: Callable[[], None]) -> Iterator[None]:
    """A phase of the run, timed; it starts settled: its collections skip what came before it, and
    the memory freed before it is given back."""
    settle()
    trim_heap()  # what the phases before freed (bench/RESULTS.md)
    if isinstance(log, PhaseWatcher):
        log.start(name)
    started = time.perf_counter()
    yield
    log(name, time.perf_counter() - started)


@contextmanager
def _older_objects_left_alone() -> Iterator[Callable[[], None]]:
    """Yields `settle`: after it, garbage collections skip the objects made so far, here and in
    the workers forked later (which would also copy every page a collection touches). Each phase
    starts settled (`_phase`), and so do the report's imports (`_import_report`): the imports and the
    datasets' ids, names and indexes are walked by no collection of the phases after them (a full
    one in build_findings, or in each read or shard worker, would walk them all). All are collected
    as before once the block ends; a caller's own freeze is left alone."""
    if gc.get_freeze_count():
        yield lambda: None
        return
    try:
        yield gc.freeze
    finally:
        gc.unfreeze()


def _import_report(settle: Callable[[], None]) -> None:
    """The report's code (its pydantic models, the page's templates), costly to import: done while
    the read's forked workers decode or both sides' masks are read and drawn (`meanwhile`), else
    once the shards are merged, while the search for other readings runs beside it. Its objects
    live as long as the process: no collection walks them while they are made, and they are
    settled before collections resume."""
    with gc_paused():
        import jinja2  # noqa: F401
        import numpy.random  # noqa: F401

        import handler.report.finishers
        import handler.report.page.compiled  # noqa: F401

        settle()


class RunResult(msgspec.Struct, frozen=True):
    outputs: NodeOutputs
    findings: Findings
    location: str
    page: Mapping[str, object]  # the features' drawing data the page got besides the findings


def run(
    inputs: NodeInputs,
    store: Store,
    log: PhaseLog = quiet,
    costs: TimeCosts | None = None,
    execution: ExecutionOptions | None = None,
    slices: SliceFile | None = None,
    announce: Callable[[RunResult], None] | None = None,
) -> RunResult:
    """Evaluate, then store the report; the REPORT_ID exists only once the report is complete.

    `announce` hands the published report's id to whoever waits for it (the node prints its
    outputs line): it runs inside the report's staging, so a run stopped before the id is out
    (SIGTERM, SIGINT, a closed pipe) withdraws the report, and "no report was published" is true.

    `costs` are the labeler's seconds per action for the time estimate (else the inputs'
    TIME_COSTS file, else the defaults); `execution` chooses where the shards run; `slices` names sets of
    asset ids to score on their own (native asset tags are slices too).
    """
    door = FrontDoor.of_inputs(inputs, costs, execution)
    with _older_objects_left_alone() as settle:
        import_report = partial(_import_report, settle)
        with _phase("read datasets", log, settle), meanwhile(import_report):
            if inputs.images:  # a mistyped --images fails now, not after the evaluation
                given_root(inputs.images, IMAGES_KEY)
            # The registry is read at plan time: a test may register one more analysis.
            plan = door.read(inputs, store, features.ANALYSES)
        from handler.report.publish import PRE_LABELS, report_location, staged_report

        with staged_report(store) as staging:
            # The ledger's chunks are written on another thread until the phase ends: all of them by
            # then. The pre-label candidates of shards run here are held until trimmed.
            held = HeldChunks()
            with _phase("match and score", log, settle), writing_behind() as write:
                shards = len(plan.tasks)
                sinks = staging.ledger_sinks(shards), staging.pre_label_sinks(shards)
                processed = door.process_run(inputs, plan, *sinks, write, held.write)
                import_report()  # done already if the read ran it meanwhile
                merged, evaluated = processed.merged, processed.evaluated
                from handler.report.exports import lowest_thresholds
                from handler.report.finishers import FINISHERS
                from handler.sections.finishing import finish_findings, finish_merged

                finished = finish_merged(FINISHERS, merged, plan)  # the sketches' pass among them
            with _phase(DRAW_IMAGES, log, settle):
                finished += finish_merged(FINISHERS, merged, plan, DRAW_IMAGES)
            # The datasets read (a mask run's runs, the run's largest columns) are not the report's.
            del plan
            with _phase("build report", log, settle):
                findings, page = door.compute_findings(processed, finished, slices or {}, staging.report_id)
                parts = {**finished.parts, **finish_findings(FINISHERS, merged, findings, page)}
                # The pre-label candidates down to what a policy keeps, now that it is known.
                lowest = lowest_thresholds(findings.recommendation, inputs.confidence.value)
                pre_labels = staging.rewrite_chunks(
                    evaluated.pre_label_chunks, partial(trimmed, lowest=lowest), PRE_LABELS, held.contents
                )
                del held
            with _phase("store report", log, settle):
                staging.publish(parts, (*evaluated.ledger_chunks, *pre_labels))
            outputs = NodeOutputs(staging.report_id, findings.efficiency_level)
            result = RunResult(outputs, findings, report_location(store, staging.report_id), page)
            if announce is not None:
                announce(result)
    return result
