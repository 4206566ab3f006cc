"""The one-page HTML report (contract §8): self-contained, every dataset string escaped.

The gauge's geometry is computed here and the other figures' in `handler.report.charts`, so the
templates only place numbers; every string from a dataset reaches the page through jinja2's
autoescaping.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import jinja2
    from markupsafe import Markup

from handler.engine import GRADES, Outcome
from handler.engine.routing import MIN_CLASS_BOXES
from handler.engine.sweep import SWEEP_GRID
from handler.engine.timecost import ACTIONS
from handler.report import charts
from handler.report.findings.model import Findings
from handler.report.findings.sections import figures, fragments
from handler.report.findings.sections.work import size_bounds_text
from handler.report.findings.wording import counted, duration, image_duration, saving, score_text
from handler.resources import resource_path

TEMPLATE: Final = "report.html.j2"
# The outcomes' names on the page: their card titles and narrow-column names (`Outcome`).
CARD_LABELS: Final = {outcome.key: outcome.label for outcome in Outcome}
SHORT_LABELS: Final = {outcome.key: outcome.short_label for outcome in Outcome}
ACTION_LABELS: Final = dict(
    zip(
        ACTIONS,
        (
            "Accept (correct)",
            "Nudge (shifted)",
            "Relabel (class-confused)",
            "Delete (false positive)",
            "Draw (false negative)",
        ),
        strict=True,
    )
)
BAND_COLORS: Final = ("#c53030", "#dd6b20", "#b7791f", "#1a7f4b")  # Minimal → Production
CENTER, RADIUS = (110.0, 110.0), 90.0
SCORE_BELOW: Final = 32.0  # the score's baseline, this far below the gauge's centre
# An escaped asset id breaks after these (`&amp;` and the like are left whole: `;` is not one).
SEPARATORS: Final = re.compile(r"([_\-./:])")
CODE: Final = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class Card:
    key: str
    label: str
    value: str
    detail: str
    caption: str  # what the card counts, with the thresholds of this run


def card_captions(iou_min: float, iou_perfect: float) -> dict[str, str]:
    """Each outcome's definition (contract §6) in a few words, with the actual IoU bounds."""
    low, high = f"{iou_min:g}", f"{iou_perfect:g}"
    return {
        "correct": f"same class, IoU ≥ {high}",
        "shifted": f"same class, {low} ≤ IoU < {high}",
        "class_confused": f"other class, IoU ≥ {low}",
        "false_positive": f"kept prediction, no match at IoU ≥ {low}",
        "false_negative": "ground-truth box nothing matched",
        "mean_iou": f"of same-class matches (IoU ≥ {low})",
    }


def _point(score: float, radius: float = RADIUS) -> tuple[float, float]:
    """The point of the half-circle gauge for a score in [0, 1] (0 left, 1 right)."""
    angle = math.pi * (1 - score)
    return CENTER[0] + radius * math.cos(angle), CENTER[1] - radius * math.sin(angle)


def _arc(start: float, end: float, radius: float = RADIUS) -> str:
    (x0, y0), (x1, y1) = _point(start, radius), _point(end, radius)
    return f"M {x0:.2f} {y0:.2f} A {radius} {radius} 0 0 1 {x1:.2f} {y1:.2f}"


def _tick(bound: float) -> dict[str, Any]:
    """A grade bound marked across the band, with its value just outside the arc."""
    (x0, y0), (x1, y1) = _point(bound, RADIUS - 11), _point(bound, RADIUS + 11)
    x, y = _point(bound, RADIUS + 20)
    return {
        "path": f"M {x0:.2f} {y0:.2f} L {x1:.2f} {y1:.2f}",
        "x": f"{x:.2f}",
        "y": f"{y + 4:.2f}",
        "label": f"{bound:g}",
    }


def _listed(words: list[str]) -> str:
    """`a, b and c`."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def gauge(score: float, interval: tuple[float, float] | None = None) -> dict[str, Any]:
    """The half-circle gauge: grade bands, their bounds, the needle, and the score's interval as a
    dark arc just inside the bands (the same scale, so it is said once)."""
    bounds = sorted(numerator / denominator for _, numerator, denominator in GRADES)
    edges = [*bounds, 1.0]
    bands = [{"path": _arc(edges[i], edges[i + 1]), "color": BAND_COLORS[i]} for i in range(len(bounds))]
    x, y = _point(score, RADIUS - 24)
    ticks = [_tick(bound) for bound in bounds if bound > 0]
    return {
        "bands": bands,
        "ticks": ticks,
        "bounds": _listed([tick["label"] for tick in ticks]),
        "center": tuple(f"{v:g}" for v in CENTER),
        "score_at": (f"{CENTER[0]:g}", f"{CENTER[1] + SCORE_BELOW:g}"),
        "needle": f"M {CENTER[0]} {CENTER[1]} L {x:.2f} {y:.2f}",
        "interval": None if interval is None else _arc(*interval, radius=RADIUS - 12),
    }


def cards(findings: Findings) -> list[Card]:
    counts, shares, parameters = findings.counts, findings.shares, findings.parameters
    captions = card_captions(parameters.iou_min, parameters.iou_perfect)
    total = counts.total
    result = [
        Card(key, label, f"{getattr(shares, key):.1%}", f"{getattr(counts, key)} of {total}", captions[key])
        for key, label in CARD_LABELS.items()
    ]
    mean_iou, matched = findings.mean_iou, counts.correct + counts.shifted
    value = "none" if mean_iou is None else f"{mean_iou:.3f}"
    result.append(
        Card("mean_iou", "Mean IoU", value, counted(matched, "pair", "pairs"), captions["mean_iou"])
    )
    return result


def sweep_grid_text() -> str:
    """`from 0 to 0.95 in steps of 0.05`, from the engine's grid."""
    step = round(SWEEP_GRID[1] - SWEEP_GRID[0], 10)
    return f"from {SWEEP_GRID[0]:g} to {SWEEP_GRID[-1]:g} in steps of {step:g}"


def drawn(findings: Findings) -> dict[str, Any]:
    """What the figures of a scored run draw (nothing when nothing was scored): each section's
    figure's values."""
    if findings.reason is not None:
        return {}
    return {k: v for figure in figures(type(findings)) for k, v in figure.draw(findings).items()}


def as_text(message: str, report_id: str) -> Markup:
    """A warning's message for the page: escaped, `code` between backticks set as code, and the
    placeholder REPORT_ID given as this report's own id."""
    from markupsafe import Markup, escape

    text = str(escape(message.replace("REPORT_ID", report_id)))
    return Markup(CODE.sub(r"<code>\1</code>", text))


def breakable(text: str) -> Markup:
    """`text` escaped, with a line-break opportunity after each separator (`_ - . / :`), so a
    narrow caption wraps a long asset id between its parts, never inside a number."""
    from markupsafe import Markup, escape

    return Markup(SEPARATORS.sub(r"\1<wbr>", str(escape(text))))


def environment() -> jinja2.Environment:
    """The report pages' one environment: autoescaping on, undefined names fail."""
    import jinja2  # only a run that renders a page pays for it

    from handler.report.page.compiled import use_compiled_templates

    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(resource_path("report_templates")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    use_compiled_templates(environment)  # compiled once per user, not once per run
    environment.filters["duration"] = duration
    environment.filters["image_duration"] = image_duration
    environment.filters["saving"] = saving
    environment.filters["breakable"] = breakable
    environment.filters["as_text"] = as_text
    environment.globals.update(
        counted=counted,
        score2=score_text,
        width=charts.WIDTH,
        sweep_height=charts.SWEEP_HEIGHT,
        colors=charts.ACTION_COLORS,
        colors_by_outcome={outcome.key: charts.ACTION_COLORS[outcome.action] for outcome in Outcome},
        scratch_color=charts.SCRATCH_COLOR,
        action_keys=ACTIONS,
        outcome_actions={outcome.key: outcome.action for outcome in Outcome},
    )
    return environment


def render_html(findings: Findings) -> str:
    template = environment().get_template(TEMPLATE)
    return template.render(
        f=findings,
        fragments=fragments(type(findings)),  # the registered sections' fragments, in field order
        gauge=gauge(
            findings.assistance_score,
            None
            if findings.uncertainty is None
            else (findings.uncertainty.score_low, findings.uncertainty.score_high),
        ),
        grade_bounds=" / ".join(f"{n / d:g}" for _, n, d in reversed(GRADES[:-1])),
        cards=cards(findings),
        sweep_grid=sweep_grid_text(),
        sweep_grid_values=SWEEP_GRID,
        min_class_boxes=MIN_CLASS_BOXES,
        figures=[figure.template for figure in figures(type(findings))],
        **drawn(findings),
        size_bounds=size_bounds_text(),
        outcomes=SHORT_LABELS,
        actions=ACTION_LABELS,
    )
