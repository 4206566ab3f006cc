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
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
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
    return 0


def _medians(runs: list[Measurement]) -> tuple[float, float]:
    return statistics.median(r.wall for r in runs), statistics.median(r.peak_rss_mb for r in runs)


if __name__ == "__main__":
    raise SystemExit(main())
