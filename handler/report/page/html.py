"""The one-page HTML report: self-contained, every dataset string escaped.

The page is its frame (report_templates/report.html.j2: the run, the verdict) and the registered
features' fragments in the registry's order (handler/sections/shown.py); each feature's
section computes its figure's geometry, with the shared drawing helpers of `handler.sections.charts`,
so the templates only place numbers; every string from a dataset reaches the page through jinja2's
autoescaping (or markupsafe's `escape`, for the figures' parts written as SVG in `charts`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import msgspec

if TYPE_CHECKING:
    import jinja2
    from markupsafe import Markup

from handler.engine import Outcome
from handler.engine.timecost import ACTIONS
from handler.features import FOLDER
from handler.report.findings.model import Findings
from handler.resources import resource_path
from handler.sections import charts
from handler.sections.shown import Shown, features
from handler.sections.wording import (
    ShapeWords,
    between,
    counted,
    duration,
    ends,
    how_often,
    image_duration,
    saved_time,
    saving,
    score_text,
    short_name,
    signed,
    tail_of,
)

FEATURES_FOLDER: Final = FOLDER  # the features' fragments (a test points it at a copy)

TEMPLATE: Final = "report.html.j2"
# The outcomes' narrow-column names (`Outcome`).
SHORT_LABELS: Final = {outcome.key: outcome.short_label for outcome in Outcome}
CODE: Final = re.compile(r"`([^`]+)`")


def action_labels(words: ShapeWords) -> dict[str, str]:
    """Each action's row title, the action as said for the run's shape and its outcome:
    `Nudge (shifted)`, `Fix the outline (shifted)`."""
    return {o.action: f"{words.action(o.action).capitalize()} ({o.label.lower()})" for o in Outcome}


def shown(findings: Findings) -> list[Shown]:
    """The features the page shows, in the registry's order: all of them once something was
    scored, else those shown always (the warnings, the grade, the dataset figures)."""
    return [spec for spec in features(type(findings)) if findings.reason is None or spec.always]


def drawn(findings: Findings, specs: list[Shown]) -> dict[str, Any]:
    """Every shown feature's values, by name (each feature names its own)."""
    return {k: v for spec in specs if spec.draw is not None for k, v in spec.draw(findings).items()}


def as_text(message: str, report_id: str) -> Markup:
    """A warning's message for the page: escaped, `code` between backticks set as code, and the
    placeholder REPORT_ID given as this report's own id."""
    from markupsafe import Markup, escape

    text = str(escape(message.replace("REPORT_ID", report_id)))
    return Markup(CODE.sub(r"<code>\1</code>", text))


class MarkedVerdict(msgspec.Struct, frozen=True):
    """The verdict for the page, its score and grade marked where it says them (the page says each
    once: the gauge and the grade heading show them only when the sentence does not)."""

    text: Markup
    says_score: bool
    says_grade: bool


def marked_verdict(findings: Findings) -> MarkedVerdict:
    from markupsafe import Markup, escape

    text = str(escape(findings.headline()))
    if findings.reason is not None:
        return MarkedVerdict(Markup(text), False, False)
    marks = {
        "assistance_score": str(escape(score_text(findings.assistance_score))),
        "efficiency_level": str(escape(findings.efficiency_level)),
    }
    said = {}
    for field, words in marks.items():
        said[field] = words in text
        text = text.replace(words, f'<strong data-field="{field}">{words}</strong>', 1)
    return MarkedVerdict(Markup(text), said["assistance_score"], said["efficiency_level"])


def score_between(low: float, high: float, level: float) -> str:
    """`between 0.33 and 0.40, 19 times in 20`."""
    return between(low, high, score_text, level)


def signed_between(low: float, high: float, level: float) -> str:
    """`between -0.12 and -0.07, 19 times in 20` (minus signs)."""
    return between(low, high, signed, level)


def signed_ends(low: float, high: float) -> str:
    """`-0.18 to +0.01` (minus signs); `0.00` when both ends are."""
    return ends(low, high, signed)


def duration_between(low: float, high: float, level: float) -> str:
    """`between -35 min and -17 min, 19 times in 20` (minus signs)."""
    return between(low, high, duration, level)


def saved_between(low: float, high: float, level: float) -> str:
    """`between 1 h 51 min and 2 h 48 min, 19 times in 20` (a loss said as one)."""
    return between(low, high, saved_time, level)


def environment() -> jinja2.Environment:
    """The report pages' one environment: autoescaping on, undefined names fail."""
    import jinja2  # only a run that renders a page pays for it

    from handler.report.page.compiled import use_compiled_templates

    environment = jinja2.Environment(
        # The page's frame and shared macros, then each feature's fragment (<feature>/fragment.html.j2).
        loader=jinja2.FileSystemLoader([resource_path("report_templates"), FEATURES_FOLDER]),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    use_compiled_templates(environment)  # compiled once per user, not once per run
    environment.filters["duration"] = duration
    environment.filters["image_duration"] = image_duration
    environment.filters["saving"] = saving
    environment.filters["as_text"] = as_text
    environment.filters["short_name"] = short_name
    environment.filters["tail_of"] = tail_of
    environment.filters["signed"] = signed
    environment.globals.update(
        counted=counted,
        score_between=score_between,
        how_often=how_often,
        saved_between=saved_between,
        signed_between=signed_between,
        signed_ends=signed_ends,
        duration_between=duration_between,
        score2=score_text,
        width=charts.WIDTH,
        sweep_height=charts.SWEEP_HEIGHT,
        colors=charts.ACTION_COLORS,
        colors_by_outcome={outcome.key: charts.ACTION_COLORS[outcome.action] for outcome in Outcome},
        scratch_color=charts.SCRATCH_COLOR,
        action_keys=ACTIONS,
        sketch_shapes=charts.sketch_shapes,
        class_bars=charts.class_bars,
        sketch_marks=charts.sketch_marks,
    )
    return environment


def render_html(findings: Findings, page: Mapping[str, object] | None = None) -> str:
    """The page: the run's head, then each shown feature's fragment in the registry's order.
    `page` is drawing data the features built from the run (`Shown.page`), not in the findings."""
    specs = shown(findings)
    template = environment().get_template(TEMPLATE)
    return template.render(
        f=findings,
        verdict=marked_verdict(findings),
        fragments=[spec.template for spec in specs],
        **(page or {}),
        **drawn(findings, specs),
        outcomes=SHORT_LABELS,
        actions=action_labels(findings.time.words),
    )
