"""Findings (a typed model), the HTML page and the per-box outcome lines built from an evaluation."""

from handler.report.context import RunFacts
from handler.report.findings import build_findings, new_report_id
from handler.report.html import render_html
from handler.report.model import KIND, Findings
from handler.report.outcome_lines import outcome_lines

__all__ = [
    "KIND",
    "Findings",
    "RunFacts",
    "build_findings",
    "new_report_id",
    "outcome_lines",
    "render_html",
]
