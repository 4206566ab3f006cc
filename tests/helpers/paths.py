"""Where the tests find the project and the shared third-party annotation files."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _third_party() -> Path:
    """`$PRELABEL_THIRD_PARTY`, else `../shared/data/third_party` beside the project."""
    configured = os.environ.get("PRELABEL_THIRD_PARTY")
    if configured:
        return Path(configured)
    beside = ROOT.parent / "shared" / "data" / "third_party"
    return beside if beside.exists() else Path("/work/shared/data/third_party")


THIRD_PARTY = _third_party()
