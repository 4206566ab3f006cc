"""A report's life in the store: written under staging and published whole (`staged_report`),
its parts (`ReportPart`), listed, read back, and its leftovers collected."""

from handler.report.publish.asset import (
    FINDINGS_PART,
    LEDGER,
    OUTCOMES,
    PRE_LABELS,
    SAFE_AGE_SECONDS,
    collect_garbage,
    has_part,
    latest_report,
    list_reports,
    parse_duration,
    read_report_chunks,
    read_report_part,
    reading_part,
    report_chunks,
    report_location,
)
from handler.report.publish.staging import ReportStaging, new_report_id, staged_report
from handler.sections.parts import ReportPart

__all__ = [
    "FINDINGS_PART",
    "LEDGER",
    "OUTCOMES",
    "PRE_LABELS",
    "SAFE_AGE_SECONDS",
    "ReportPart",
    "ReportStaging",
    "collect_garbage",
    "has_part",
    "latest_report",
    "list_reports",
    "new_report_id",
    "parse_duration",
    "read_report_chunks",
    "read_report_part",
    "reading_part",
    "report_chunks",
    "report_location",
    "staged_report",
]
