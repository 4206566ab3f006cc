"""Rotated boxes against the same boxes upright: `python bench/rotated.py [--repeats N]`.

The default workload (bench/workloads.py: 5k images, ~429k detections, generated as
`bench/run.py` does) written twice as native JSON: once with every box upright, once with every
box turned (GT and predictions each by an angle drawn per box, the same seed every time), the
boxes before turning the same. Our node runs on both as whole processes (`python -m handler`),
alternating, and the medians of wall time and peak RSS give the cost of rotated boxes as a ratio.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.process import measure, repeated_script  # noqa: E402
from bench.workloads import WORKLOADS, ensure_data  # noqa: E402

GENERATOR: Final = ROOT / "bench" / "gen_workload.py"
SEED: Final = 38


def _native(coco: dict[str, Any], results: list[dict[str, Any]] | None, turned: bool) -> dict[str, Any]:
    """A COCO file (or a results list on its images) as a native document, every box turned or none.
    A prediction turns by its own angle near the GT's of its image, so turned pairs still match."""
    rng = random.Random(SEED)
    names = {c["id"]: c["name"] for c in coco["categories"]}
    entries = results if results is not None else coco["annotations"]
    by_image: dict[int, list[dict[str, Any]]] = {}
    for entry in entries:
        x, y, w, h = entry["bbox"]
        annotation = {
            "label": names[entry["category_id"]],
            "x_min": x,
            "y_min": y,
            "x_max": x + w,
            "y_max": y + h,
        }
        if "score" in entry:
            annotation["confidence"] = entry["score"]
        if turned:
            annotation["rotation"] = round(15 + rng.uniform(-3, 3), 3)
        by_image.setdefault(entry["image_id"], []).append(annotation)
    assets = [
        {
            "asset_id": image["file_name"],
            "width": image["width"],
            "height": image["height"],
            "annotations": by_image.get(image["id"], []),
        }
        for image in coco["images"]
    ]
    return {"assets": assets}


def _write(folder: Path) -> dict[str, tuple[Path, Path]]:
    files = ensure_data(WORKLOADS["default"], ROOT / "bench" / ".work", GENERATOR)
    coco = json.loads(files.gt.read_text())
    results = json.loads(files.results.read_text())
    written = {}
    for name, turned in (("upright", False), ("rotated", True)):
        gt, pred = folder / f"{name}-gt.json", folder / f"{name}-pred.json"
        gt.write_text(json.dumps(_native(coco, None, turned)))
        pred.write_text(json.dumps(_native(coco, results, turned)))
        written[name] = (gt, pred)
    return written


def main(argv: list[str] | None = None) -> int:
    repeats, folder = repeated_script("rotated", __doc__.split("\n")[0], argv)
    pairs = _write(folder)
    measured: dict[str, list[Any]] = {name: [] for name in pairs}
    for _ in range(repeats):
        for name, (gt, pred) in pairs.items():
            environ = {
                **os.environ,
                "GT_DATASET": str(gt),
                "PRED_DATASET": str(pred),
                "CONFIDENCE_THRESHOLD": "0.5",
            }
            with tempfile.TemporaryDirectory() as store:
                log = Path(store) / "log.txt"
                run = measure([sys.executable, "-m", "handler", "-q", "--store", store], environ, log, 600)
                if run.returncode:
                    print(log.read_text(), file=sys.stderr)
                    return 1
            measured[name].append(run)
    wall = {name: statistics.median(m.wall for m in runs) for name, runs in measured.items()}
    rss = {name: statistics.median(m.peak_rss_mb for m in runs) for name, runs in measured.items()}
    for name in pairs:
        print(f"{name}: {wall[name]:.2f} s, {rss[name]:.0f} MB (median of {repeats})")
    ratios = wall["rotated"] / wall["upright"], rss["rotated"] / rss["upright"]
    print(f"rotated / upright: wall x{ratios[0]:.2f}, peak RSS x{ratios[1]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
