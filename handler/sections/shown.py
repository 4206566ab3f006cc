"""How a findings field is built and shown: the one registry of the report's features.

Each field of `Findings` whose type is `Annotated[..., Shown(...)]` is registered: `build_findings`
builds it from the `RunFacts`, and, when it names a `feature`, the page shows that feature's
fragment (handler/features/<feature>/fragment.html.j2) at the field's place: **the page's order is
the fields' order**. A fragment reads the findings as `f` and the values its `draw` gives (its
figure's geometry); `page` gives drawing data that is not findings (the sketches' boxes and
pictures), built from the run and handed to the page only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import msgspec
from pydantic import BaseModel

if TYPE_CHECKING:
    from handler.sections.context import RunFacts

Values = Mapping[str, object]


class Shown(msgspec.Struct, frozen=True):
    """A findings field: how it is built (None: with the run-level fields, in build.py), and the
    feature whose fragment shows it, if any."""

    build: Callable[[RunFacts], object] | None = None
    feature: str | None = None  # handler/features/<feature>/fragment.html.j2
    draw: Callable[[Any], Values] | None = None  # Findings -> the fragment's values
    page: Callable[[RunFacts], Values] | None = None  # the run -> drawing data kept out of the findings
    always: bool = False  # shown when nothing was scored too

    @property
    def template(self) -> str | None:
        return None if self.feature is None else f"{self.feature}/fragment.html.j2"


def registered(model: type[BaseModel]) -> dict[str, Shown]:
    """The model's registered fields, in field order, with their specs."""
    return {
        name: spec
        for name, info in model.model_fields.items()
        for spec in info.metadata
        if isinstance(spec, Shown)
    }


def build_sections(model: type[BaseModel], facts: RunFacts) -> dict[str, object]:
    """Every field a feature builds."""
    return {name: spec.build(facts) for name, spec in registered(model).items() if spec.build is not None}


def features(model: type[BaseModel]) -> list[Shown]:
    """The shown features, in the page's order (the fields' order)."""
    return [spec for spec in registered(model).values() if spec.feature is not None]


def page_values(model: type[BaseModel], facts: RunFacts) -> dict[str, object]:
    """The drawing data the features build from the run for the page only."""
    return {k: v for spec in features(model) if spec.page is not None for k, v in spec.page(facts).items()}
