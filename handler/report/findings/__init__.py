"""The findings of a run (kind `dataset_intelligence_findings_v1`) as a typed model, built from the
merged state: the registry of the features (`model`: one field each, whose section is in
handler/features/<name>/), how the run-level fields are built (`build`), compare's model
(`compare_findings`) and the Python metrics' result (`efficiency_result`); with the names of what
every section is built on (handler/sections/).

The names below are loaded when first used: the model imports every feature, which a caller that
wants only a word or compare's model need not pay for."""

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
    from handler.report.findings.efficiency_result import EfficiencyResult
    from handler.report.findings.model import KIND, DataWarning, Execution, Findings
    from handler.sections.context import RunFacts
    from handler.sections.fields import Counts, Grade, Score, Shares
    from handler.sections.finishing import Merged
    from handler.sections.shown import page_values
    from handler.sections.wording import counted, duration, saving, score_text

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
    "RunFacts": "handler.sections.context",
    "Merged": "handler.sections.finishing",
    "EfficiencyResult": "handler.report.findings.efficiency_result",
    "Counts": "handler.sections.fields",
    "Grade": "handler.sections.fields",
    "Score": "handler.sections.fields",
    "Shares": "handler.sections.fields",
    "KIND": "handler.report.findings.model",
    "DataWarning": "handler.report.findings.model",
    "Execution": "handler.report.findings.model",
    "Findings": "handler.report.findings.model",
    "page_values": "handler.sections.shown",
    "counted": "handler.sections.wording",
    "duration": "handler.sections.wording",
    "saving": "handler.sections.wording",
    "score_text": "handler.sections.wording",
}


__all__ = [
    "KIND",
    "Comparison",
    "Counts",
    "DataWarning",
    "EfficiencyResult",
    "Execution",
    "Findings",
    "Grade",
    "Merged",
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
