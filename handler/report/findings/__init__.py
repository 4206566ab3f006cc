"""The findings of a run (kind `dataset_intelligence_findings_v1`) as a typed model, built from the
merged state: the run-level parts (`model`), the registry of the features (`shown`; each feature's
section is in handler/features/<name>/), and compare's model (`compare_findings`).

The names below are loaded when first used: a feature's section imports `findings.context` and
`findings.fields`, and the model imports every section, so a package that loaded the model at once
would make a section imported first (a test of it alone) import itself half-made."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from handler.features.recommendation.section import Recommendation
    from handler.features.time.section import TimeSaved, time_saved
    from handler.report.findings.build import build_findings
    from handler.report.findings.compare_findings import (
        Comparison,
        RunFigures,
        build_comparison,
        compare_summary,
    )
    from handler.report.findings.context import RunFacts
    from handler.report.findings.fields import Counts, Grade, Score, Shares
    from handler.report.findings.model import KIND, DataWarning, Execution, Findings
    from handler.report.findings.shown import page_values
    from handler.report.findings.wording import counted, duration, saving, score_text

# Each name's module.
_HOMES = {
    "Recommendation": "handler.features.recommendation.section",
    "TimeSaved": "handler.features.time.section",
    "time_saved": "handler.features.time.section",
    "build_findings": "handler.report.findings.build",
    "Comparison": "handler.report.findings.compare_findings",
    "RunFigures": "handler.report.findings.compare_findings",
    "build_comparison": "handler.report.findings.compare_findings",
    "compare_summary": "handler.report.findings.compare_findings",
    "RunFacts": "handler.report.findings.context",
    "Counts": "handler.report.findings.fields",
    "Grade": "handler.report.findings.fields",
    "Score": "handler.report.findings.fields",
    "Shares": "handler.report.findings.fields",
    "KIND": "handler.report.findings.model",
    "DataWarning": "handler.report.findings.model",
    "Execution": "handler.report.findings.model",
    "Findings": "handler.report.findings.model",
    "page_values": "handler.report.findings.shown",
    "counted": "handler.report.findings.wording",
    "duration": "handler.report.findings.wording",
    "saving": "handler.report.findings.wording",
    "score_text": "handler.report.findings.wording",
}


__all__ = [
    "KIND",
    "Comparison",
    "Counts",
    "DataWarning",
    "Execution",
    "Findings",
    "Grade",
    "Recommendation",
    "RunFacts",
    "RunFigures",
    "Score",
    "Shares",
    "TimeSaved",
    "build_comparison",
    "build_findings",
    "compare_summary",
    "counted",
    "duration",
    "page_values",
    "saving",
    "score_text",
    "time_saved",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
