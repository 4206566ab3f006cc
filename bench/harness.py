"""Run the benchmark: every tool on every workload, alternating and repeated; write RESULTS.md.

Raw measurements are kept in WORK_DIR/raw.json, merged per workload, so that a workload can be
re-run alone (`--workloads big`) and RESULTS.md rebuilt from everything measured
(`--report-only`).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from bench.machine import describe
from bench.peers_env import peer_python, versions
from bench.process import measure
from bench.results import write_results
from bench.tools import BEFORE, OURS, ROOT, command, node_reads_workers, tool_names
from bench.workloads import WORKLOADS, Files, Workload, count_boxes, ensure_data

PHASE_LINE = re.compile(r"^\[prelabel\] (?P<phase>[^:]+): (?P<seconds>[0-9.]+) s$", re.MULTILINE)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python bench/run.py", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--workloads",
        default="default,dense,conf0,big,jsonl-10k,jsonl-100k,workers",
        help="comma-separated, of: " + ", ".join(WORKLOADS),
    )
    parser.add_argument("--repeats", type=int, default=3, help="runs of each tool per workload (median)")
    parser.add_argument(
        "--generator",
        type=Path,
        default=ROOT / "bench" / "gen_workload.py",
        help="the workload generator (default: bench/gen_workload.py)",
    )
    parser.add_argument("--work-dir", type=Path, default=ROOT / "bench" / ".work", help="data, venv, logs")
    parser.add_argument("--peers-venv", type=Path, help="the peers' venv (default: WORK_DIR/peers-venv)")
    parser.add_argument(
        "--verify", default="default,dense,conf0,big", help="workloads checked against the reference"
    )
    parser.add_argument(
        "--without",
        default="",
        help="comma-separated tools left out of every workload (e.g. pycocotools,tide on a busy machine)",
    )
    parser.add_argument(
        "--before",
        type=Path,
        help="a tree of the project (the code before a change): its node runs too, as 'ours before'",
    )
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds before one run is killed")
    parser.add_argument("--output", type=Path, default=ROOT / "bench" / "RESULTS.md")
    parser.add_argument("--report-only", action="store_true", help="only rebuild RESULTS.md from raw.json")
    return parser


def _say(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def _phases(log: Path) -> dict[str, float]:
    return {m["phase"]: float(m["seconds"]) for m in PHASE_LINE.finditer(log.read_text(errors="replace"))}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _rotated(items: list[str], by: int) -> list[str]:
    by %= len(items)
    return items[by:] + items[:by]


def _run_tools(workload: Workload, files: Files, args: argparse.Namespace, python: Path) -> dict[str, Any]:
    """Each tool `repeats` times, the order rotated every round so that no tool always goes first."""
    before = [BEFORE] if args.before and workload.peers else []
    tools = [tool for tool in [*tool_names(workload), *before] if tool not in args.without.split(",")]
    runs: dict[str, list[dict[str, Any]]] = {tool: [] for tool in tools}
    phases: dict[str, dict[str, list[float]]] = {OURS: defaultdict(list), BEFORE: defaultdict(list)}
    logs = args.work_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    for round_ in range(args.repeats):
        for tool in _rotated(tools, round_):
            log = logs / f"{workload.name}-{_slug(tool)}-{round_}.log"
            with tempfile.TemporaryDirectory(prefix="prelabel-bench-store-") as store:
                how = command(tool, workload, files, Path(store), python, args.before)
                result = measure(how.argv, how.env, log, args.timeout)
            _say(f"{workload.name} #{round_ + 1} {tool}: {result.wall:.2f} s, {result.peak_rss_mb:.0f} MB")
            if result.returncode != 0:
                _say(f"  exit {result.returncode}; see {log}")
            runs[tool].append(result.to_dict())
            if tool in phases:
                for phase, seconds in _phases(log).items():
                    phases[tool][phase].append(seconds)
    return {"runs": runs, "phases": dict(phases[OURS]), "phases_before": dict(phases[BEFORE])}


def _in_process(what: str, workload: Workload, files: Files, repeats: int) -> dict[str, Any]:
    argv = [sys.executable, str(ROOT / "bench" / "inprocess.py"), what, str(files.gt), str(files.results)]
    argv += ["--threshold", workload.confidence_threshold, "--repeats", str(repeats)]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:] or ["failed"]}
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def _warm(path: Path) -> None:
    """Into the page cache before the first run (a file, or a folder of shards)."""
    for file in sorted(path.iterdir()) if path.is_dir() else [path]:
        file.read_bytes()


def _prepared(workload: Workload, args: argparse.Namespace) -> Files:
    """The workload's files, made in a forked child: writing JSONL shards builds every record in
    Python, and on Linux a child's peak RSS starts from its parent's RSS at fork (it survives
    exec), so a harness that had written them itself would lend every later run its peak."""
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(ensure_data, workload, args.work_dir, args.generator).result()


def _bench_workload(workload: Workload, args: argparse.Namespace, python: Path) -> dict[str, Any]:
    if workload.workers and not node_reads_workers():
        reason = "the node does not read PRELABEL_WORKERS yet (not named in handler/)"
        _say(f"{workload.name}: skipped: {reason}")
        return {"machine": describe(), "skipped": reason}
    files = _prepared(workload, args)
    _warm(files.gt)
    _warm(files.results)
    entry = {"machine": describe(), **_run_tools(workload, files, args, python)}
    if workload.workers:
        return entry  # the in-process measurements are those of the big workload
    if workload.tiles:
        entry["boxes"] = count_boxes(files)
    if workload.name in ("default", "conf0"):
        _say(f"{workload.name}: timing the confidence sweep")
        entry["sweep"] = _in_process("sweep", workload, files, args.repeats)
    _say(f"{workload.name}: peak RSS by the end of each phase")
    entry["memory"] = _in_process("memory", workload, files, 1)
    if workload.name in args.verify.split(","):
        _say(f"{workload.name}: checking the engine against tests/helpers/reference.py")
        entry["verify"] = _in_process("verify", workload, files, 1)
        _say(f"  equal: {entry['verify'].get('equal')}")
    return entry


def load_raw(work_dir: Path) -> dict[str, Any]:
    """Everything measured so far (WORK_DIR/raw.json)."""
    raw = work_dir / "raw.json"
    if raw.exists():
        loaded: dict[str, Any] = json.loads(raw.read_text())
        return loaded
    return {"workloads": {}}


def save_raw(work_dir: Path, raw: dict[str, Any]) -> None:
    (work_dir / "raw.json").write_text(json.dumps(raw, indent=1))


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    args.work_dir.mkdir(parents=True, exist_ok=True)
    raw = load_raw(args.work_dir)
    if not args.report_only:
        python = peer_python(args.peers_venv or args.work_dir / "peers-venv")
        raw["peer_versions"] = versions(python)
        invocation = " ".join(["python bench/run.py", *sys.argv[1:]])
        for name in args.workloads.split(","):
            # Workloads are merged from several runs: each keeps the command that measured it.
            measured = _bench_workload(WORKLOADS[name], args, python)
            raw["workloads"][name] = measured | {"invocation": invocation}
            save_raw(args.work_dir, raw)
    write_results(raw, args.output)
    _say(f"wrote {args.output}")
    return 0
