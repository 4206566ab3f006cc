"""Findings sections: each is one module here holding its models, its builder, the name of its
page fragment (report_templates/sections/<fragment>.html.j2) and its figure if it has one (a
`Figure`: report_templates/figures/<name>.html.j2 and what it draws), exported as one `Annotated`
type.

A section is registered by one typed field on `Findings` (handler/report/findings/model.py) of that
type: `build_findings` builds every such field from the `RunFacts`, and the page includes the
fragments in field order and the figures in their `place` order, each with what its `draw` gives.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from handler.report.findings.context import RunFacts


@dataclass(frozen=True)
class Figure:
    """A section's picture among the page's figures: its template, what it draws from the built
    findings (the template's values by name), and its place (the figures are shown by place)."""

    name: str  # report_templates/figures/<name>.html.j2
    draw: Callable[[Any], Mapping[str, object]]  # Findings -> values; the page skips it if unscored
    place: int  # the page shows time 10, per class 20, sketches 30, sweep 40: a new one goes between

    @property
    def template(self) -> str:
        return f"figures/{self.name}.html.j2"


@dataclass(frozen=True)
class SectionSpec:
    """How a findings field is built, which fragment shows it (None: shown by another's), and the
    figure it brings (None: none)."""

    build: Callable[[RunFacts], object]
    fragment: str | None = None
    figure: Figure | None = None

    @property
    def template(self) -> str | None:
        return None if self.fragment is None else f"sections/{self.fragment}.html.j2"


def registered(model: type[BaseModel]) -> dict[str, SectionSpec]:
    """The model's section fields, in field order, with their specs."""
    return {
        name: spec
        for name, info in model.model_fields.items()
        for spec in info.metadata
        if isinstance(spec, SectionSpec)
    }


def build_sections(model: type[BaseModel], facts: RunFacts) -> dict[str, object]:
    return {name: spec.build(facts) for name, spec in registered(model).items()}


def fragments(model: type[BaseModel]) -> list[str]:
    """The page fragments, in field order."""
    return [spec.template for spec in registered(model).values() if spec.template is not None]


def figures(model: type[BaseModel]) -> list[Figure]:
    """The sections' figures, in their place order."""
    found = [spec.figure for spec in registered(model).values() if spec.figure is not None]
    return sorted(found, key=lambda figure: figure.place)
