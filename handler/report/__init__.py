"""Findings JSON and the HTML page built from an evaluation."""

from handler.report.findings import KIND, RunFacts, build_findings, new_report_id, validate_findings
from handler.report.html import render_html

__all__ = ["KIND", "RunFacts", "build_findings", "new_report_id", "render_html", "validate_findings"]
