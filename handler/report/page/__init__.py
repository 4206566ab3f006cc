"""The report's HTML page and compare's page: static inline SVG, no script, nothing fetched,
dataset text escaped (jinja2 templates in report_templates/, compiled once per user)."""

from handler.report.page.compare_page import render_compare_html
from handler.report.page.html import render_html

__all__ = ["render_compare_html", "render_html"]
