"""The processes the harness compares: our node, the two parse floors, and the peers."""

from __future__ import annotations

import compileall
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
    "hotcoco": "hotcoco_eval.py",
    "ultrafast-pycocotools": "ultrafast_pycocotools_eval.py",
    "vernier": "vernier_eval.py",
}
OURS: Final = "ours"
# Our node from another tree (`--before TREE`: the code before a change), in the same run.
BEFORE: Final = "ours before"
FLOOR_OURS: Final = "floor (our parsers)"
FLOOR_ORJSON: Final = "floor (orjson.loads)"


@dataclass(frozen=True)
class Command:
    argv: list[str]
    env: dict[str, str]


def product_env(root: Path = ROOT) -> dict[str, str]:
    """The environment of the benchmark itself, with the work tree's `handler` first on the path.

    Bytecode is written and read as for an installed package (pip compiles on install, and so
    the peers run from bytecode): a PYTHONDONTWRITEBYTECODE in the caller's environment would
    otherwise make every run of ours compile its ~80 modules again (~0.3 s). `python -m` puts the
    current folder first on the path, ahead of PYTHONPATH: run from the work tree, `--before`'s
    node would import the work tree's `handler`, so the current folder is left off (PYTHONSAFEPATH).
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONSAFEPATH"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(root), env.get("PYTHONPATH"))))
    compileall.compile_dir(str(root / "handler"), quiet=1)
    return env


def workers_tool(workers: int) -> str:
    return f"{OURS}, PRELABEL_WORKERS={workers}"


def tool_names(workload: Workload) -> list[str]:
    if workload.workers:
        return [workers_tool(n) for n in workload.workers]
    if workload.tiles:
        return [OURS]  # the floors and the peers read COCO files, not JSONL shards
    return [OURS, FLOOR_OURS, FLOOR_ORJSON, *workload.peers]


def node_reads_workers() -> bool:
    """Whether the node knows PRELABEL_WORKERS yet (it is named somewhere in its code)."""
    return any("PRELABEL_WORKERS" in path.read_text() for path in (ROOT / "handler").rglob("*.py"))


def _ours(workload: Workload, files: Files, store: Path, extra: dict[str, str], root: Path = ROOT) -> Command:
    env = product_env(root) | {
        "GT_DATASET": str(files.gt),
        "PRED_DATASET": str(files.results),
        "CONFIDENCE_THRESHOLD": workload.confidence_threshold,
        "PRELABEL_STORE": str(store),
    }
    return Command([sys.executable, "-m", "handler"], env | extra)


def command(
    tool: str, workload: Workload, files: Files, store: Path, peer_python: Path, before: Path | None = None
) -> Command:
    """How to run `tool` on the workload's files (`store`: a fresh report store for our node;
    `before`: the tree `BEFORE` runs from)."""
    paths = [str(files.gt), str(files.results)]
    if tool == OURS:
        return _ours(workload, files, store, {})
    if tool == BEFORE and before is not None:
        return _ours(workload, files, store, {}, before)
    workers = {workers_tool(n): n for n in workload.workers}
    if tool in workers:
        return _ours(workload, files, store, {"PRELABEL_WORKERS": str(workers[tool])})
    if tool == FLOOR_OURS:
        return Command([sys.executable, str(BENCH / "peers" / "floor_ours.py"), *paths], product_env())
    if tool == FLOOR_ORJSON:
        return Command([sys.executable, str(BENCH / "peers" / "floor_orjson.py"), *paths], product_env())
    script = BENCH / "peers" / PEER_SCRIPTS[tool]
    # The project on the path for `bench.peers.cocoeval_api` only: the peers import nothing else of it.
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(ROOT)}
    return Command([str(peer_python), str(script), *paths], env)
