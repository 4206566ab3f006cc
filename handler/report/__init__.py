"""Findings JSON, the HTML page and the per-box outcome lines built from an evaluation."""

from handler.report.findings import KIND, RunFacts, build_findings, new_report_id, validate_findings
from handler.report.html import render_html
from handler.report.outcome_lines import outcome_lines

__all__ = [
    "KIND",
    "RunFacts",
    "build_findings",
    "new_report_id",
    "outcome_lines",
    "render_html",
    "validate_findings",
]
