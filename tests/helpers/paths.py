"""Where the tests find the project and the third-party annotation files copied under tests/data."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
# Real annotation files written by other projects, each folder with a SOURCE.md (origin, license):
# docs/credits.md credits them.
THIRD_PARTY = ROOT / "tests" / "data" / "third_party"
