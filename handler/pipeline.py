"""The node's one code path: inputs → datasets → engine → report → storage → outputs."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final, Protocol, runtime_checkable

from handler.datasets import load_dataset, pair_datasets
from handler.engine import evaluate
from handler.engine.sweep import confidence_sweep
from handler.engine.timecost import TimeCosts
from handler.inputs import NodeInputs
from handler.outputs import NodeOutputs
from handler.report import Findings, RunFacts, build_findings, new_report_id, outcome_lines, render_html
from handler.report.asset import publish_report, report_location
from handler.storage import Store, resolve_dataset

PhaseLog = Callable[[str, float], None]
# The phases of `run`, in order (a progress display counts them).
PHASES: Final = (
    "read ground truth",
    "read predictions",
    "pair assets and classes",
    "match and score",
    "confidence sweep",
    "build report",
    "store report",
)


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


def _report_parts(facts: RunFacts, findings: Findings) -> dict[str, bytes]:
    return {
        "findings": findings.to_json(),
        "html": render_html(findings).encode("utf-8"),
        "outcomes": outcome_lines(facts.evaluation, facts.paired.asset_ids, facts.paired.class_names),
    }


def run(inputs: NodeInputs, store: Store, log: PhaseLog = quiet, costs: TimeCosts | None = None) -> RunResult:
    """Evaluate, then store the report; the REPORT_ID exists only once the report is complete.

    `costs` are the labeler's seconds per action for the time estimate (CLI and API only:
    they are not node inputs).
    """
    with _phase("read ground truth", log):
        gt = load_dataset(resolve_dataset(inputs.gt_dataset, store), inputs.gt_format)
    with _phase("read predictions", log):
        pred = load_dataset(resolve_dataset(inputs.pred_dataset, store), inputs.pred_format, gt)
    with _phase("pair assets and classes", log):
        paired = pair_datasets(gt.dataset, pred.dataset)
    with _phase("match and score", log):
        evaluation = evaluate(paired.gt, paired.pred, len(paired.asset_ids), inputs.thresholds)
    with _phase("confidence sweep", log):
        sweep = confidence_sweep(evaluation, inputs.thresholds)
    report_id = new_report_id()
    with _phase("build report", log):
        facts = RunFacts(inputs, gt.dataset, pred.dataset, paired, evaluation, sweep, costs or TimeCosts())
        findings = build_findings(facts, report_id)
        parts = _report_parts(facts, findings)
    with _phase("store report", log):
        publish_report(store, report_id, parts)
    outputs = NodeOutputs(report_id, findings.efficiency_level)
    return RunResult(outputs, findings, report_location(store, report_id))
