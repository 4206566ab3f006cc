"""The findings of a run (kind `dataset_intelligence_findings_v1`) as a typed model, built from the
merged state: the run-level parts (`model`), the registry of the features (`shown`; each feature's
section is in handler/features/<name>/), and compare's model (`compare_findings`)."""

from handler.features.recommendation.section import Recommendation
from handler.features.time.section import TimeSaved, time_saved
from handler.report.findings.build import build_findings
from handler.report.findings.compare_findings import Comparison, RunFigures, build_comparison, compare_summary
from handler.report.findings.context import RunFacts
from handler.report.findings.fields import Counts, Grade, Score, Shares
from handler.report.findings.model import KIND, DataWarning, Execution, Findings
from handler.report.findings.shown import page_values
from handler.report.findings.wording import counted, duration, saving, score_text

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
