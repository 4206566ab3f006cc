"""The peers' own virtual environment: never the product's dependencies."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Final

PACKAGES: Final = ("pycocotools", "faster-coco-eval", "tidecv", "hotcoco", "ultrafast-pycocotools", "vernier")
PROBE: Final = "import pycocotools, faster_coco_eval, tidecv, hotcoco, ultrafast_pycocotools, vernier"


def peer_python(venv: Path) -> Path:
    """The venv's interpreter, with the peers installed (created on first use)."""
    python = venv / "bin" / "python"
    if python.exists() and subprocess.run([str(python), "-c", PROBE], capture_output=True).returncode == 0:
        return python
    print(f"[bench] installing {', '.join(PACKAGES)} into {venv}", file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", *PACKAGES], check=True)
    return python


def versions(python: Path) -> dict[str, str]:
    """Installed versions of the peers and of numpy in their venv."""
    code = (
        "import importlib.metadata as m, json; "
        f"print(json.dumps({{p: m.version(p) for p in {[*PACKAGES, 'numpy']!r}}}))"
    )
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout
    parsed: dict[str, str] = json.loads(out)
    return parsed
