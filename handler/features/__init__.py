"""The report's features: one folder each, `handler/features/<name>/`, holding what it takes to show
one thing on the page (CONTRIBUTING.md, "A feature shown on the page"):

- `partial.py` (if it needs a figure of its own from the shards): its `Analysis`, the pure-numpy
  partial of one shard and its exact merge. Workers import it, so it imports no pydantic or jinja2
  (a rule test keeps it so). The folder is its registration: every `Analysis` a feature's
  `partial.py` defines runs on every shard, after the engine's own (`CORE`); a partial that other
  code reads too lives in handler/engine/analyses/ instead;
- `section.py`: its findings model, its builder, its figure's geometry, and the `Annotated` type
  whose one field on `Findings` (handler/report/findings/model.py) registers it: the page shows
  the features in the fields' order;
- `finisher.py` (if it needs work after the merge): its finishers, listed in the registry
  (handler/report/finishers/__init__.py);
- `fragment.html.j2`: its piece of the page.

A feature imports only downward: the engine, the datasets, and what every section is built on
(handler/sections/). The registries above (the `Findings` model, the finishers) import the
features; nothing below them does. This package's face is the partials' registry, which the
pipeline hands to the execution.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Final

from handler.engine.analyses import COMPARE_ONLY, CORE
from handler.engine.plugin import Analysis

FOLDER: Final = Path(__file__).resolve().parent


def feature_partials() -> tuple[Analysis[Any], ...]:
    """Every `Analysis` of every feature's partial.py, by folder name, then as the module lists them."""
    found: list[Analysis[Any]] = []
    for partial in sorted(FOLDER.glob("*/partial.py")):
        module = importlib.import_module(f"{__name__}.{partial.parent.name}.partial")
        # Those it defines (its shard function is its own), not one it imports from elsewhere.
        found += [
            value
            for value in vars(module).values()
            if isinstance(value, Analysis) and value.shard.__module__ == module.__name__
        ]
    return tuple(found)


# What every shard runs: the engine's own analyses, then the features'.
ANALYSES: Final[tuple[Analysis[Any], ...]] = (*CORE, *feature_partials())

__all__ = ["ANALYSES", "COMPARE_ONLY", "FOLDER", "feature_partials"]
