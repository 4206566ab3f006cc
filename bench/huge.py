"""The huge run: 10M GT / 100M prediction boxes as native JSONL shards, and our node on them.

    python bench/huge.py [--data bench/.work/huge] [--assets 1000000] [--timeout 600]

The data is generated shard by shard (seeded per shard, numpy only, never the whole dataset
in memory), once; then the node runs once as a whole process (wall, CPU, peak RSS by
`wait4`, killed after --timeout), and the outcome goes into WORK_DIR/raw.json and RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Final

import numpy as np

ROOT: Final = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.harness import PHASE_LINE, load_raw, save_raw  # noqa: E402
from bench.jsonl import IntArray, asset_header, box_record, shard_bytes  # noqa: E402
from bench.machine import describe  # noqa: E402
from bench.process import measure  # noqa: E402
from bench.results import write_results  # noqa: E402
from bench.tools import product_env  # noqa: E402

ASSETS_PER_SHARD: Final = 1000
GT_PER_ASSET: Final = 10.0
PRED_PER_ASSET: Final = 100.0
DETECTED: Final = 0.85
CLASSES: Final = 80
BYTES_PER_BOX: Final = 110  # a prediction record is 107 bytes; GT 90, plus headers
_HEADER: Final = asset_header(b"h", 7, 5)
_GT_RECORD: Final = box_record(7, None)
_PRED_RECORD: Final = box_record(7, 3)


def _boxes(rng: np.random.Generator, asset: IntArray, width: IntArray, height: IntArray) -> IntArray:
    """Random boxes (hundredths of a pixel, xyxy) inside their assets' images: log-uniform sides."""
    w, h = width[asset].astype(float), height[asset].astype(float)
    side_w = np.exp(rng.uniform(np.log(4.0), np.log(w / 2)))
    side_h = np.clip(side_w * np.exp(rng.normal(0.0, 0.5, len(asset))), 2.0, h - 1)
    x0, y0 = rng.uniform(0, w - side_w), rng.uniform(0, h - side_h)
    xyxy: IntArray = np.rint(np.stack([x0, y0, x0 + side_w, y0 + side_h], axis=1) * 100).astype(np.int64)
    return xyxy


def _jittered(rng: np.random.Generator, xyxy: IntArray, limit: IntArray) -> IntArray:
    """Detections of GT boxes: each edge moved by N(0, sigma x side), sigma one of three levels."""
    sides = np.tile(xyxy[:, 2:] - xyxy[:, :2], 2)
    sigma = rng.choice([0.03, 0.08, 0.15], size=(len(xyxy), 1))
    moved = np.rint(xyxy + rng.normal(0.0, 1.0, xyxy.shape) * sigma * sides).astype(np.int64)
    moved = np.clip(moved, 0, limit)
    moved[:, 2:] = np.maximum(moved[:, 2:], moved[:, :2] + 100)  # at least one pixel
    inside: IntArray = np.minimum(moved, limit)
    return inside


def _columns(xyxy: IntArray, class_id: IntArray, asset: IntArray) -> dict[str, IntArray]:
    names = ("x_min", "y_min", "x_max", "y_max")
    return {"class_id": class_id, "asset": asset, **{n: xyxy[:, i] for i, n in enumerate(names)}}


def shard(seed: int, index: int, n_assets: int) -> tuple[bytes, bytes]:
    """GT and prediction JSONL of one shard of `n_assets` assets (ids continue across shards)."""
    rng = np.random.default_rng([seed, index])
    assets = {
        "id": index * ASSETS_PER_SHARD + np.arange(n_assets, dtype=np.int64),
        "width": rng.integers(640, 1921, n_assets),
        "height": rng.integers(480, 1081, n_assets),
    }
    gt_asset = np.repeat(np.arange(n_assets), rng.poisson(GT_PER_ASSET, n_assets))
    gt_xyxy = _boxes(rng, gt_asset, assets["width"], assets["height"])
    gt_class = rng.integers(0, CLASSES, len(gt_asset))
    found = rng.random(len(gt_asset)) < DETECTED
    limit = np.stack([assets["width"], assets["height"]] * 2, axis=1)[gt_asset[found]] * 100
    flipped = rng.random(found.sum()) < 0.1
    det_class = np.where(flipped, rng.integers(0, CLASSES, found.sum()), gt_class[found])
    fp_per_asset = rng.poisson(PRED_PER_ASSET - DETECTED * GT_PER_ASSET, n_assets)
    fp_asset = np.repeat(np.arange(n_assets), fp_per_asset)
    pred_asset = np.concatenate([gt_asset[found], fp_asset])
    pred_xyxy = np.concatenate(
        [_jittered(rng, gt_xyxy[found], limit), _boxes(rng, fp_asset, assets["width"], assets["height"])]
    )
    pred_class = np.concatenate([det_class, rng.integers(0, CLASSES, len(fp_asset))])
    confidence = np.concatenate([rng.uniform(0.3, 1.0, found.sum()), rng.beta(1.0, 8.0, len(fp_asset))])
    order = np.argsort(pred_asset, kind="stable")
    pred = _columns(pred_xyxy[order], pred_class[order], pred_asset[order])
    pred["confidence"] = np.rint(confidence[order] * 1000).astype(np.int64)
    gt = _columns(gt_xyxy, gt_class, gt_asset)
    return (
        shard_bytes(_HEADER, assets, _GT_RECORD, gt, gt_asset),
        shard_bytes(_HEADER, assets, _PRED_RECORD, pred, pred["asset"]),
    )


def generate(data: Path, n_assets: int, seed: int) -> dict[str, int]:
    """data/gt and data/pred, one shard pair at a time; `complete.json` (with the box counts)
    last, so a partial set is made again."""
    stamp, wanted = data / "complete.json", {"assets": n_assets, "seed": seed}
    if stamp.exists():
        made: dict[str, int] = json.loads(stamp.read_text())
        if {k: made.get(k) for k in wanted} == wanted:
            return made
    need = n_assets * (GT_PER_ASSET + PRED_PER_ASSET) * BYTES_PER_BOX
    data.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(data).free
    if free < need * 1.1:
        raise SystemExit(f"huge: {data}: {free / 1e9:.1f} GB free, the data needs about {need / 1e9:.1f} GB")
    (data / "gt").mkdir(exist_ok=True)
    (data / "pred").mkdir(exist_ok=True)
    started = time.perf_counter()
    made = {**wanted, "gt_boxes": 0, "pred_boxes": 0, "bytes": 0}
    for index, start in enumerate(range(0, n_assets, ASSETS_PER_SHARD)):
        contents = shard(seed, index, min(ASSETS_PER_SHARD, n_assets - start))
        for side, content in zip(("gt", "pred"), contents, strict=True):
            (data / side / f"part-{index:05d}.jsonl").write_bytes(content)
            made[f"{side}_boxes"] += content.count(b'{"label"')  # one per box
            made["bytes"] += len(content)
        if index % 100 == 0:
            print(f"[bench] huge: shard {index}, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    made["generate_seconds"] = round(time.perf_counter() - started)
    stamp.write_text(json.dumps(made))
    return made


def run(data: Path, timeout: float, memory_gb: float, log: Path) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="prelabel-bench-store-") as store:
        env = product_env() | {
            "GT_DATASET": str(data / "gt"),
            "PRED_DATASET": str(data / "pred"),
            "CONFIDENCE_THRESHOLD": "0.5",
            "PRELABEL_STORE": store,
        }
        result = measure([sys.executable, "-m", "handler"], env, log, timeout, int(memory_gb * 2**30))
    text = log.read_text(errors="replace")
    return {
        **result.to_dict(),
        "timeout": timeout,
        "memory_limit_gb": memory_gb,
        "phases": {m["phase"]: float(m["seconds"]) for m in PHASE_LINE.finditer(text)},
        "last_lines": text.strip().splitlines()[-3:],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/huge.py", description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parent / ".work" / "huge")
    parser.add_argument("--assets", type=int, default=1_000_000, help="10 GT and 100 predictions each")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds before the node is killed")
    parser.add_argument(
        "--memory-gb", type=float, default=16.0, help="the node's address-space limit (RLIMIT_AS)"
    )
    parser.add_argument("--work-dir", type=Path, default=ROOT / "bench" / ".work")
    args = parser.parse_args(argv)
    made = generate(args.data, args.assets, args.seed)
    args.work_dir.mkdir(parents=True, exist_ok=True)
    entry = {
        "machine": describe(),
        **made,
        **run(args.data, args.timeout, args.memory_gb, args.work_dir / "huge.log"),
    }
    raw = load_raw(args.work_dir)
    raw["huge"] = entry
    save_raw(args.work_dir, raw)
    write_results(raw, ROOT / "bench" / "RESULTS.md")
    print(json.dumps(entry, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
