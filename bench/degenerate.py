"""Degenerate images: `python bench/degenerate.py [--boxes N] [--repeats N] [--without-peers]`.

One image of N boxes (10,000 by default) on each side, six ways: side by side (no two overlap:
the ordinary case), the same rotated by 10 degrees (native JSON: our node alone), identical
(every box the same), nested (concentric, a hundredth of a pixel apart: every two overlap),
identical lines (no area: no IoU above 0) and 1,000 identical (at the bound of overlapping pairs
one image may have, so matched whole). Our node (`python -m handler`) runs on each as a whole
process, and so do hotcoco and ultrafast-pycocotools (load + COCOeval, in the peers' venv as
`bench/run.py` installs it; they keep the 100 most confident detections of an image, as COCOeval
does), alternating; the medians of wall time and peak RSS are printed, with each case's ratio to
side by side: what a degenerate image costs more than an ordinary one.

Then the whole-run workloads, ours alone (the run's budget decides them, not one image): 1,000
nested boxes a side, ten and twenty-five images of 999 GT and 1,000 predicted identical boxes,
1,000 identical rotated boxes a side, and 2,000 identical rotated GT boxes with one prediction.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.peers_env import peer_python  # noqa: E402
from bench.process import Measurement, measure  # noqa: E402
from bench.tools import PEER_SCRIPTS, product_env  # noqa: E402

PEERS: Final = ("hotcoco", "ultrafast-pycocotools")
ROTATED: Final = "side by side, rotated"
FLAT: Final = "identical lines (no area)"
TIMEOUT: Final = 600.0
MEMORY_LIMIT: Final = 16 << 30  # a run that needs more fails alone


def _boxes(kind: str, n: int) -> list[list[float]]:
    """COCO boxes (x, y, width, height) of one kind."""
    if kind == FLAT:
        return [[100.0, 100.0, 0.0, 50.0]] * n
    if kind.endswith("identical"):
        return [[100.0, 100.0, 200.0, 200.0]] * (1000 if kind.startswith("1,000") else n)
    if kind == "nested":
        return [[500 - i * 0.01, 500 - i * 0.01, 200 + i * 0.02, 200 + i * 0.02] for i in range(n)]
    row = int(n**0.5) + 1
    return [[(i % row) * 20.0, (i // row) * 20.0, 15.0, 15.0] for i in range(n)]


def _native(boxes: list[list[float]], size: int, confident: bool) -> dict[str, object]:
    """A native document of one image, every box turned by 10 degrees."""
    annotations = [
        {"label": "cell", "x_min": x, "y_min": y, "x_max": x + w, "y_max": y + h, "rotation": 10.0}
        | ({"confidence": 0.9} if confident else {})
        for x, y, w, h in boxes
    ]
    return {"assets": [{"asset_id": "one.jpg", "width": size, "height": size, "annotations": annotations}]}


@dataclass(frozen=True)
class RunWorkload:
    """Images of `gt` and `pred` copies of one box each (nested: a hundredth of a pixel apart)."""

    images: int
    gt: int
    pred: int
    nested: bool = False
    rotated: bool = False


RUN_WORKLOADS: Final = {
    "1,000 nested a side": RunWorkload(1, 1000, 1000, nested=True),
    "10 images of 999 x 1,000 identical": RunWorkload(10, 999, 1000),
    "25 images of 999 x 1,000 identical": RunWorkload(25, 999, 1000),
    "1,000 x 1,000 identical rotated": RunWorkload(1, 1000, 1000, rotated=True),
    "2,000 identical rotated GT, 1 prediction": RunWorkload(1, 2000, 1, rotated=True),
}


def _run_boxes(workload: RunWorkload, n: int) -> list[dict[str, object]]:
    step = [i * 0.01 if workload.nested else 0.0 for i in range(n)]
    turn = {"rotation": 10.0} if workload.rotated else {}
    return [
        {"label": "cell", "x_min": 500 - d, "y_min": 500 - d, "x_max": 700 + d, "y_max": 700 + d} | turn
        for d in step
    ]


def _write_run(folder: Path, name: str, workload: RunWorkload) -> tuple[Path, Path]:
    """Native JSON documents of a whole-run workload."""
    stem = "".join(c for c in name if c.isalnum() or c == " ").replace(" ", "-")
    paths = folder / f"run-{stem}-gt.json", folder / f"run-{stem}-pred.json"
    for path, n, confident in ((paths[0], workload.gt, False), (paths[1], workload.pred, True)):
        boxes = [box | ({"confidence": 0.9} if confident else {}) for box in _run_boxes(workload, n)]
        assets = [
            {"asset_id": f"{i}.jpg", "width": 1200, "height": 1200, "annotations": boxes}
            for i in range(workload.images)
        ]
        path.write_text(json.dumps({"assets": assets}))
    return paths


def _write(folder: Path, kind: str, n: int) -> tuple[Path, Path]:
    boxes = _boxes(kind, n)
    size = 20 * (int(n**0.5) + 2)
    stem = "".join(c for c in kind if c.isalnum() or c == " ").replace(" ", "-")
    paths = folder / f"{stem}-gt.json", folder / f"{stem}-pred.json"
    if kind == ROTATED:
        paths[0].write_text(json.dumps(_native(boxes, size, False)))
        paths[1].write_text(json.dumps(_native(boxes, size, True)))
        return paths
    gt = {
        "images": [{"id": 1, "file_name": "one.jpg", "width": size, "height": size}],
        "categories": [{"id": 1, "name": "cell"}],
        "annotations": [
            {"id": i + 1, "image_id": 1, "category_id": 1, "bbox": box, "area": box[2] * box[3], "iscrowd": 0}
            for i, box in enumerate(boxes)
        ],
    }
    pred = [{"image_id": 1, "category_id": 1, "bbox": box, "score": 0.9} for box in boxes]
    paths[0].write_text(json.dumps(gt))
    paths[1].write_text(json.dumps(pred))
    return paths


def _run(tool: str, gt: Path, pred: Path, python: Path | None) -> Measurement:
    with tempfile.TemporaryDirectory() as store:
        log = Path(store) / "log.txt"
        if tool == "ours":
            env = {**product_env(), "GT_DATASET": str(gt), "PRED_DATASET": str(pred)}
            argv = [sys.executable, "-m", "handler", "-q", "--store", store]
        else:
            assert python is not None
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            argv = [str(python), str(ROOT / "bench" / "peers" / PEER_SCRIPTS[tool]), str(gt), str(pred)]
        run = measure(argv, env, log, TIMEOUT, MEMORY_LIMIT)
        if run.returncode:
            print(
                f"[bench] {tool} on {gt.name}: exit {run.returncode}\n{log.read_text()[-1500:]}",
                file=sys.stderr,
            )
        return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/degenerate.py", description=__doc__.split("\n")[0])
    parser.add_argument("--boxes", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--without-peers", action="store_true", help="our node alone")
    args = parser.parse_args(argv)
    folder = ROOT / "bench" / ".work" / "degenerate"
    folder.mkdir(parents=True, exist_ok=True)
    kinds = ("side by side", ROTATED, "identical", "nested", FLAT, "1,000 identical")
    files = {kind: _write(folder, kind, args.boxes) for kind in kinds}
    tools = ("ours",) if args.without_peers else ("ours", *PEERS)
    python = None if args.without_peers else peer_python(ROOT / "bench" / ".work" / "peers-venv")
    measured: dict[tuple[str, str], list[Measurement]] = {(t, k): [] for t in tools for k in kinds}
    for _ in range(args.repeats):
        for kind in kinds:
            for tool in tools:
                if tool == "ours" or kind != ROTATED:
                    measured[tool, kind].append(_run(tool, *files[kind], python))
    print(f"| tool | image of {args.boxes:,} boxes a side | wall s | peak RSS MB | vs side by side |")
    print("|---|---|---|---|---|")
    for tool in tools:
        base = _medians(measured[tool, kinds[0]])
        for kind in kinds:
            runs = measured[tool, kind]
            if not runs:
                continue
            wall, rss = _medians(runs)
            failed = sum(1 for run in runs if run.returncode)
            note = f" ({failed} of {len(runs)} failed)" if failed else ""
            ratio = f"wall x{wall / base[0]:.1f}, RSS x{rss / base[1]:.1f}"
            print(f"| {tool} | {kind}{note} | {wall:.2f} | {rss:.0f} | {ratio} |")
    _print_run_workloads(folder, args.repeats)
    return 0


def _print_run_workloads(folder: Path, repeats: int) -> None:
    """Our node alone on each whole-run workload, alternating, medians of `repeats`."""
    files = {name: _write_run(folder, name, workload) for name, workload in RUN_WORKLOADS.items()}
    measured: dict[str, list[Measurement]] = {name: [] for name in RUN_WORKLOADS}
    for _ in range(repeats):
        for name, (gt, pred) in files.items():
            measured[name].append(_run("ours", gt, pred, None))
    print("\n| whole-run workload | wall s | peak RSS MB |")
    print("|---|---|---|")
    for name, runs in measured.items():
        wall, rss = _medians(runs)
        failed = sum(1 for run in runs if run.returncode)
        note = f" ({failed} of {len(runs)} failed)" if failed else ""
        print(f"| {name}{note} | {wall:.2f} | {rss:.0f} |")


def _medians(runs: list[Measurement]) -> tuple[float, float]:
    return statistics.median(r.wall for r in runs), statistics.median(r.peak_rss_mb for r in runs)


if __name__ == "__main__":
    raise SystemExit(main())
