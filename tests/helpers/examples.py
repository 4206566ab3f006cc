"""How many examples a property test draws: its everyday count, times PRELABEL_PROPERTY_SCALE for a
long run (docs/testing.md), so the suite stays quick and a thorough run needs no edit."""

from __future__ import annotations

import os

SCALE = float(os.environ.get("PRELABEL_PROPERTY_SCALE", "1") or 1)


def examples(everyday: int) -> int:
    """`everyday` examples, scaled for a long run (at least one)."""
    return max(1, round(everyday * SCALE))
