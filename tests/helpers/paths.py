"""Where the tests find the project and the third-party annotation files copied under tests/data."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
# Real annotation files written by other projects, each folder with a SOURCE.md (origin, license):
# docs/credits.md credits them.
THIRD_PARTY = ROOT / "tests" / "data" / "third_party"
# The machine's caches for the tests, outside the checkout as pip's is (a fresh clone reuses them;
# deleting them costs one slower run): Label Studio's migrated database, mypy's cache.
TEST_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "prelabel-eval-tests"
