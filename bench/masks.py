"""Instance masks against the peers' segm evaluation: `python bench/masks.py [--repeats N]`.

The real COCO val2014 pair of the tests (100 images: 830 GT polygon objects and 9 crowds,
cocoapi's 734 RLE mask results) copied 50 times under new image ids and names: 5,000 images,
41,950 GT objects, 36,700 mask results. Our node scores it on masks (`prelabel-eval GT PRED`,
whole process: reading, rasterising the polygons, mask IoU, matching, the report) and each peer
found in this interpreter runs COCOeval with iouType "segm" (load + evaluate + accumulate), as
whole processes, alternating; medians of wall time, CPU time and peak RSS. The peers run in their
own venv (bench/.work/peers-venv, made on first use: `bench/peers_env.py`), never ours.
"""

from __future__ import annotations

import copy
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.peers_env import peer_python  # noqa: E402
from bench.process import Measurement, measure, repeated_script  # noqa: E402

PAIR: Final = ROOT / "tests" / "data" / "third_party" / "coco_val2014_100"
COPIES: Final = 50
# The peers' scripts (bench/peers/).
PEERS: Final = {
    "pycocotools": "bench/peers/pycocotools_eval.py",
    "faster-coco-eval": "bench/peers/faster_coco_eval_eval.py",
    "hotcoco": "bench/peers/hotcoco_eval.py",
}


def _copies(gt: dict[str, Any], results: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The pair `COPIES` times, copy k's image ids shifted by k x (the largest id + 1)."""
    step = max(image["id"] for image in gt["images"]) + 1
    images, annotations, detections = [], [], []
    for k in range(COPIES):
        for image in gt["images"]:
            images.append({**image, "id": image["id"] + k * step, "file_name": f"{k}_{image['file_name']}"})
        for n, annotation in enumerate(gt["annotations"]):
            moved = copy.copy(annotation)
            moved["image_id"] += k * step
            moved["id"] = k * len(gt["annotations"]) + n + 1
            annotations.append(moved)
        detections += [{**result, "image_id": result["image_id"] + k * step} for result in results]
    return {**gt, "images": images, "annotations": annotations}, detections


def _write(folder: Path) -> tuple[Path, Path]:
    gt, results = _copies(
        json.loads((PAIR / "instances_val2014_100.json").read_text()),
        json.loads((PAIR / "instances_val2014_fakesegm100_results.json").read_text()),
    )
    gt_path, results_path = folder / "gt.json", folder / "results.json"
    gt_path.write_text(json.dumps(gt))
    results_path.write_text(json.dumps(results))
    return gt_path, results_path


def _commands(gt: Path, results: Path, store: str, peers: Path) -> dict[str, list[str]]:
    ours = [sys.executable, "-m", "handler.cli", str(gt), str(results), "--store", store, "-q"]
    commands = {"ours": ours}
    for name, script in PEERS.items():
        commands[name] = [str(peers), str(ROOT / script), str(gt), str(results), "segm"]
    return commands


def main(argv: list[str] | None = None) -> int:
    repeats, folder = repeated_script("masks", __doc__.split("\n")[0], argv)
    gt, results = _write(folder)
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    measured: dict[str, list[Measurement]] = {}
    with tempfile.TemporaryDirectory() as store:
        commands = _commands(gt, results, store, peer_python(ROOT / "bench" / ".work" / "peers-venv"))
        for turn in range(repeats):
            names = list(commands)
            for name in names[turn % len(names) :] + names[: turn % len(names)]:
                run = measure(commands[name], environ, folder / f"{name}.log", 1800)
                if run.returncode:
                    print((folder / f"{name}.log").read_text(), file=sys.stderr)
                    return 1
                measured.setdefault(name, []).append(run)
    for name, runs in measured.items():
        wall, cpu = statistics.median(m.wall for m in runs), statistics.median(m.cpu for m in runs)
        rss = statistics.median(m.peak_rss_mb for m in runs)
        print(f"{name}: {wall:.2f} s wall, {cpu:.2f} s CPU, {rss:.0f} MB (median of {len(runs)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
