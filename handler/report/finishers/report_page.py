"""`report.html`: the findings drawn as one static page (handler/report/page/)."""

from __future__ import annotations

from typing import Final

from handler.report.findings import Findings
from handler.report.page.html import render_html
from handler.report.publish import ReportPart
from handler.sections.finishing import FINDINGS, Finished, Finisher, Finishing

PAGE_PART: Final = ReportPart("html", "report.html", "text/html; charset=utf-8")


def _page(finishing: Finishing) -> Finished:
    return Finished({PAGE_PART: render_html(finishing.built(Findings), finishing.page).encode("utf-8")})


REPORT_PAGE: Final = Finisher("report.html", FINDINGS, _page, (PAGE_PART,))
