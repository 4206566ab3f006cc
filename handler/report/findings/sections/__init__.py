"""Findings sections: each is one module here holding its models, its builder and the name of its
page fragment (report_templates/sections/<fragment>.html.j2), exported as one `Annotated` type.

A section is registered by one typed field on `Findings` (handler/report/findings/model.py) of that type:
`build_findings` builds every such field from the `RunFacts`, and the page includes the fragments
in field order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel

if TYPE_CHECKING:
    from handler.report.findings.context import RunFacts


@dataclass(frozen=True)
class SectionSpec:
    """How a findings field is built, and which fragment shows it (None: shown by another's)."""

    build: Callable[[RunFacts], object]
    fragment: str | None = None

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
