"""The JSON engines a COCO results file could be read with, measured from its bytes to numpy columns
(image ids, category ids, boxes, scores): one whole process per engine and run, alternating.

    python bench/engines.py RESULTS.json [--repeats 5]

Engines that are not installed are left out with a line saying so. Prints one JSON object per
engine: the medians of its runs (wall, CPU, peak RSS of the process; `parse`: bytes to columns).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import io
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Final

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
# Engine -> the modules it needs.
ENGINES: Final = {
    "records kernel (ours, C)": ("numpy",),
    "msgspec (typed structs)": ("msgspec",),
    "orjson + numpy": ("orjson",),
    "pyarrow.json (JSON Lines blocks)": ("pyarrow",),
    "polars (JSON Lines blocks)": ("polars",),
}


def _lines(text: bytes) -> bytes:
    """A results array as JSON Lines, for the engines that read only those: an object a line."""
    return text.strip()[1:-1].replace(b"},{", b"}\n{")


def _columns(engine: str, text: bytes) -> tuple[Any, ...]:
    """The four columns, read by `engine` (imported here: its import is timed apart)."""
    if engine.startswith("records"):
        from handler.kernels.json_records import Records, records

        read = records(text)
        assert isinstance(read, Records)
        return read.image_id, read.category_id, read.xywh, read.score
    if engine.startswith("msgspec"):
        import msgspec

        class Result(msgspec.Struct, gc=False):  # what the node decoded results into before the kernel
            image_id: int
            category_id: int
            bbox: tuple[float, float, float, float]
            score: float = np.nan

        entries = msgspec.json.decode(text, type=list[Result])
        n = len(entries)
        return (
            np.fromiter((e.image_id for e in entries), np.int64, n),
            np.fromiter((e.category_id for e in entries), np.int64, n),
            np.array([e.bbox for e in entries], dtype=np.float64).reshape(n, 4),
            np.fromiter((e.score for e in entries), np.float64, n),
        )
    if engine.startswith("orjson"):
        import orjson

        rows = orjson.loads(text)
        n = len(rows)
        return (
            np.fromiter((r["image_id"] for r in rows), np.int64, n),
            np.fromiter((r["category_id"] for r in rows), np.int64, n),
            np.array([r["bbox"] for r in rows], dtype=np.float64),
            np.fromiter((r["score"] for r in rows), np.float64, n),
        )
    if engine.startswith("pyarrow"):
        from pyarrow import json as pj

        table = pj.read_json(io.BytesIO(_lines(text)))  # type: ignore[attr-defined]
        boxes = table.column("bbox").combine_chunks().flatten().to_numpy().reshape(-1, 4)
        ids = (table.column(k).to_numpy() for k in ("image_id", "category_id"))
        return (*ids, boxes, table.column("score").to_numpy())
    import polars as pl  # type: ignore[import-not-found]  # not a dependency: measured where installed

    frame = pl.read_ndjson(io.BytesIO(_lines(text)))
    boxes = frame["bbox"].explode().to_numpy().reshape(-1, 4)
    return frame["image_id"].to_numpy(), frame["category_id"].to_numpy(), boxes, frame["score"].to_numpy()


def _one(engine: str, path: str) -> None:
    """One measured reading, in this process: prints {"import": s, "parse": s}."""
    started = time.perf_counter()
    for module in ENGINES[engine]:
        importlib.import_module(module)
    text = Path(path).read_bytes()
    imported = time.perf_counter()
    _columns(engine, text)
    print(json.dumps({"import": imported - started, "parse": time.perf_counter() - imported}))


def _measure(engine: str, path: str) -> dict[str, float]:
    """One whole process: its own figures and the OS's wall, CPU and peak RSS."""
    argv = [sys.executable, __file__, path, "--one", engine]
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    assert process.stdout is not None
    figures: dict[str, float] = json.loads(process.stdout.read())
    if status != 0:
        raise RuntimeError(f"{engine}: exit status {status}")
    return figures | {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024}


def main() -> int:
    parser = argparse.ArgumentParser(prog="python bench/engines.py", description=__doc__.split("\n")[0])
    parser.add_argument("results", help="a COCO results file")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        _one(args.one, args.results)
        return 0
    engines = [e for e, modules in ENGINES.items() if all(importlib.util.find_spec(m) for m in modules)]
    for engine in sorted(set(ENGINES) - set(engines)):
        print(f"[engines] {engine}: not installed, left out", file=sys.stderr)
    runs: dict[str, list[dict[str, float]]] = {e: [] for e in engines}
    for round_ in range(args.repeats):
        for engine in engines[round_ % len(engines) :] + engines[: round_ % len(engines)]:
            runs[engine].append(_measure(engine, args.results))
    for engine, measured in runs.items():
        medians = {key: round(statistics.median(r[key] for r in measured), 3) for key in measured[0]}
        print(json.dumps({"engine": engine, **medians}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
