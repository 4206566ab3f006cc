"""Compare's HTML page: the comparison of two prediction sets drawn as one static page."""

from __future__ import annotations

from functools import partial
from typing import Final

from handler.engine.transitions import GT_OUTCOMES
from handler.report.findings.compare_findings import (
    OUTCOME_WORDS,
    Comparison,
    compare_verdict,
    scored_on_line,
)
from handler.report.page.html import SHORT_LABELS, environment
from handler.sections import charts

TEMPLATE: Final = "compare.html.j2"
GT_WORDS: Final = [OUTCOME_WORDS[outcome] for outcome in GT_OUTCOMES]


def render_compare_html(found: Comparison) -> str:
    ends = [end for r in found.per_class for end in (r.low, r.high, r.difference)]
    template = environment().get_template(TEMPLATE)
    return template.render(
        c=found,
        verdict=compare_verdict(found),
        scored_on=scored_on_line(found),
        classes=charts.folded(
            partial(charts.pair_chart, bound=charts.symmetric_bound(*ends)),
            [(r.class_name, r.score_a, r.score_b, r.low, r.high) for r in found.per_class],
        ),
        spread=charts.difference_figure(found.difference.score, found.difference.low, found.difference.high),
        transitions=charts.transition_grid(
            [list(row) for row in found.transitions.counts], GT_WORDS, list(found.transitions.seconds)
        ),
        gt_words=GT_WORDS,
        outcomes=SHORT_LABELS,
    )
