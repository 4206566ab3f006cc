"""The node's one code path: inputs → datasets → engine → report → storage → outputs."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final, Protocol, runtime_checkable

from handler.engine.timecost import TimeCosts
from handler.execution import ExecutionOptions, evaluate_plan, plan_shards
from handler.execution.sketches import sketch_images
from handler.inputs import NodeInputs
from handler.outputs import NodeOutputs
from handler.report import Findings, RunFacts, build_findings, new_report_id, render_html
from handler.report.asset import PartContent, Written, discard_chunks, publish_report, report_location
from handler.report.model import Execution
from handler.report.sections.routing import routing_part
from handler.report.sections.sketches import sketch_targets
from handler.report.slices import SliceFile
from handler.storage import Store

PhaseLog = Callable[[str, float], None]
# The phases of `run`, in order (a progress display counts them).
PHASES: Final = ("read datasets", "match and score", "build report", "store report")


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
def _phase(name: str, log: PhaseLog) -> Iterator[None]:
    if isinstance(log, PhaseWatcher):
        log.start(name)
    started = time.perf_counter()
    yield
    log(name, time.perf_counter() - started)


@dataclass(frozen=True)
class RunResult:
    outputs: NodeOutputs
    findings: Findings
    location: str


def _report_parts(findings: Findings, shards: int) -> dict[str, PartContent]:
    return {
        "findings": findings.to_json(),
        "html": render_html(findings).encode("utf-8"),
        "outcomes": Written(shards),
        "routing": routing_part(findings.routing),
    }


def run(
    inputs: NodeInputs,
    store: Store,
    log: PhaseLog = quiet,
    costs: TimeCosts | None = None,
    execution: ExecutionOptions | None = None,
    slices: SliceFile | None = None,
) -> RunResult:
    """Evaluate, then store the report; the REPORT_ID exists only once the report is complete.

    `costs` are the labeler's seconds per action for the time estimate (CLI and API only:
    they are not node inputs); `execution` chooses where the shards run; `slices` names sets of
    asset ids to score on their own (native asset tags are slices too).
    """
    report_id = new_report_id()
    with _phase("read datasets", log):
        plan = plan_shards(inputs, store, execution or ExecutionOptions())
    with _phase("match and score", log):
        evaluated = evaluate_plan(plan, store, report_id)
    try:
        with _phase("build report", log):
            costs = costs or TimeCosts()
            targets = sketch_targets(evaluated.state, costs)
            drawn = tuple(sketch_images(plan, targets.shards, targets.assets))
            facts = RunFacts(
                inputs, evaluated.gt, evaluated.pred, evaluated.state, costs, slices or {}, drawn
            )
            ran = Execution(engine=evaluated.engine, workers=evaluated.workers, shards=evaluated.shards)
            findings = build_findings(facts, report_id, ran)
            parts = _report_parts(findings, evaluated.shards)
        with _phase("store report", log):
            publish_report(store, report_id, parts)
    except BaseException:
        discard_chunks(store, report_id, "outcomes", evaluated.shards)
        raise
    outputs = NodeOutputs(report_id, findings.efficiency_level)
    return RunResult(outputs, findings, report_location(store, report_id))
