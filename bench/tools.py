"""The processes the harness compares: our node, the two parse floors, and the peers."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from bench.workloads import Files, Workload

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
PEER_SCRIPTS: Final = {
    "pycocotools": "pycocotools_eval.py",
    "faster-coco-eval": "faster_coco_eval_eval.py",
    "tide": "tide_eval.py",
}
OURS: Final = "ours"
FLOOR_OURS: Final = "floor (our parsers)"
FLOOR_ORJSON: Final = "floor (orjson.loads)"


@dataclass(frozen=True)
class Command:
    argv: list[str]
    env: dict[str, str]


def _product_env() -> dict[str, str]:
    """The environment of the benchmark itself, with the work tree's `handler` first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), env.get("PYTHONPATH"))))
    return env


def tool_names(workload: Workload) -> list[str]:
    return [OURS, FLOOR_OURS, FLOOR_ORJSON, *workload.peers]


def command(tool: str, workload: Workload, files: Files, store: Path, peer_python: Path) -> Command:
    """How to run `tool` on the workload's files (`store`: a fresh report store for our node)."""
    paths = [str(files.gt), str(files.results)]
    if tool == OURS:
        env = _product_env() | {
            "GT_DATASET": paths[0],
            "PRED_DATASET": paths[1],
            "CONFIDENCE_THRESHOLD": workload.confidence_threshold,
            "PRELABEL_STORE": str(store),
        }
        return Command([sys.executable, "-m", "handler"], env)
    if tool == FLOOR_OURS:
        return Command([sys.executable, str(BENCH / "peers" / "floor_ours.py"), *paths], _product_env())
    if tool == FLOOR_ORJSON:
        return Command([sys.executable, str(BENCH / "peers" / "floor_orjson.py"), *paths], _product_env())
    script = BENCH / "peers" / PEER_SCRIPTS[tool]
    return Command([str(peer_python), str(script), *paths], {**os.environ, "MPLBACKEND": "Agg"})
