"""The one-page HTML report (SPEC §8): self-contained, every dataset string escaped."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import jinja2

from handler.engine import GRADES
from handler.resources import resource_path

TEMPLATE: Final = "report.html.j2"
CARD_LABELS: Final = {
    "correct": "Correct",
    "shifted": "Shifted",
    "class_confused": "Class-confused",
    "false_positive": "False positive",
    "false_negative": "False negative",
}
BAND_COLORS: Final = ("#c53030", "#dd6b20", "#b7791f", "#1a7f4b")  # Minimal → Production
CENTER, RADIUS = (110.0, 110.0), 90.0


@dataclass(frozen=True)
class Card:
    key: str
    label: str
    value: str
    detail: str


def _point(score: float, radius: float = RADIUS) -> tuple[float, float]:
    """The point of the half-circle gauge for a score in [0, 1] (0 left, 1 right)."""
    angle = math.pi * (1 - score)
    return CENTER[0] + radius * math.cos(angle), CENTER[1] - radius * math.sin(angle)


def _arc(start: float, end: float) -> str:
    (x0, y0), (x1, y1) = _point(start), _point(end)
    return f"M {x0:.2f} {y0:.2f} A {RADIUS} {RADIUS} 0 0 1 {x1:.2f} {y1:.2f}"


def gauge(score: float) -> dict[str, Any]:
    bounds = sorted(numerator / denominator for _, numerator, denominator in GRADES)
    edges = [*bounds, 1.0]
    bands = [{"path": _arc(edges[i], edges[i + 1]), "color": BAND_COLORS[i]} for i in range(len(bounds))]
    x, y = _point(score, RADIUS - 24)
    return {"bands": bands, "needle": f"M {CENTER[0]} {CENTER[1]} L {x:.2f} {y:.2f}"}


def cards(findings: dict[str, Any]) -> list[Card]:
    counts, shares = findings["counts"], findings["shares"]
    result = [
        Card(key, label, f"{shares[key]:.1%}", f"{counts[key]} of {counts['total']}")
        for key, label in CARD_LABELS.items()
    ]
    mean_iou = findings["mean_iou"]
    result.append(
        Card("mean_iou", "Mean IoU", "none" if mean_iou is None else f"{mean_iou:.3f}", "matched, same class")
    )
    return result


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(resource_path("report_templates")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )


def render_html(findings: dict[str, Any]) -> str:
    template = _environment().get_template(TEMPLATE)
    return template.render(f=findings, gauge=gauge(findings["assistance_score"]), cards=cards(findings))
