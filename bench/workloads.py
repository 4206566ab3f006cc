"""The benchmark's workloads, generated with the shared generator (`gen_workload.py`)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

import orjson

from bench.shards import write_shards

PEERS: Final = ("pycocotools", "faster-coco-eval", "tide", "hotcoco", "ultrafast-pycocotools", "vernier")
# The fast ones, the only peers of the 50k workload.
FAST_PEERS: Final = ("faster-coco-eval", "hotcoco", "ultrafast-pycocotools", "vernier")


@dataclass(frozen=True)
class Workload:
    """One benchmark case: a generated dataset pair, the threshold our node runs with, the peers."""

    name: str
    data: str  # folder under the work dir with gt.json and results.json
    generator_args: tuple[str, ...]
    confidence_threshold: str
    peers: tuple[str, ...] = PEERS
    note: str = ""
    tiles: int = 0  # > 0: read as native JSONL shards, the generated images this many times over
    # > 1: the COCO files hold the generated images this many times over, with fresh ids: a big
    # file without the pure-Python generator's cost of as many images.
    repeats: int = 1
    workers: tuple[int, ...] = ()  # our node alone, once per PRELABEL_WORKERS value


DEFAULT_ARGS: Final = ("--images", "5000", "--seed", "0")
BIG_ARGS: Final = ("--images", "50000", "--seed", "0")
JSONL_ARGS: Final = ("--images", "10000", "--seed", "0")
WORKLOADS: Final = {
    w.name: w
    for w in (
        Workload("default", "default", DEFAULT_ARGS, "0.5", note="COCO-val-sized: 5k images"),
        Workload(
            "dense", "dense", ("--images", "500", "--seed", "0", "--dense"), "0.5", note="~150 GT/image"
        ),
        Workload("conf0", "default", DEFAULT_ARGS, "0", note="default, CONFIDENCE_THRESHOLD 0"),
        Workload(
            "big",
            "big",
            BIG_ARGS,
            "0.5",
            peers=FAST_PEERS,
            note="50k images; pycocotools and TIDE left out (pycocotools needs ~10x its 1.9 GB of default)",
        ),
        Workload(
            "jsonl-10k",
            "jsonl-base",
            JSONL_ARGS,
            "0.5",
            peers=(),
            note="native JSONL shards of 1000 assets, GT and predictions; our node alone",
            tiles=1,
        ),
        Workload(
            "jsonl-100k",
            "jsonl-base",
            JSONL_ARGS,
            "0.5",
            peers=(),
            note="jsonl-10k tiled 10 times with renamed asset ids",
            tiles=10,
        ),
        Workload(
            "workers",
            "big",
            BIG_ARGS,
            "0.5",
            peers=(),
            note="big, our node with PRELABEL_WORKERS=1 and =2",
            workers=(1, 2),
        ),
        Workload("smoke", "smoke", ("--images", "250", "--seed", "1"), "0", note="the CI smoke test's"),
        Workload(
            "kill",
            "kill",
            ("--images", "250", "--seed", "3"),
            "0.5",
            peers=(),
            note="bench/killed.py's: 250 images 10 times over, results over jsondoc.PARALLEL_MIN_BYTES, so "
            "they are streamed in pieces",
            repeats=10,
        ),
    )
}


@dataclass(frozen=True)
class Files:
    gt: Path
    results: Path


def _made(files: Files, stamp: Path, wanted: object) -> bool:
    """Both files are there, made from what `wanted` says (the stamp beside them)."""
    present = files.gt.exists() and files.results.exists() and stamp.exists()
    return present and json.loads(stamp.read_text()) == wanted


def _ensure_coco(workload: Workload, work_dir: Path, generator: Path) -> Files:
    """The workload's COCO files, generated unless already there with the same generator arguments
    (and repeated, for a workload of `repeats`)."""
    if workload.repeats > 1:
        return _ensure_repeated(workload, work_dir, generator)
    folder = work_dir / workload.data
    files = Files(folder / "gt.json", folder / "results.json")
    stamp = folder / "generator-args.json"
    wanted = list(workload.generator_args)
    if _made(files, stamp, wanted):
        return files
    folder.mkdir(parents=True, exist_ok=True)
    print(
        f"[bench] generating {workload.data}: gen_workload.py {' '.join(wanted)}", file=sys.stderr, flush=True
    )
    subprocess.run([sys.executable, str(generator), str(folder), *wanted], check=True, stdout=sys.stderr)
    stamp.write_text(json.dumps(wanted))
    return files


def _ensure_repeated(workload: Workload, work_dir: Path, generator: Path) -> Files:
    """The generated files `repeats` times over: each copy's images, annotations and results with
    ids of their own, the first copy's as generated."""
    base = _ensure_coco(replace(workload, data=f"{workload.data}-base", repeats=1), work_dir, generator)
    folder = work_dir / workload.data
    files = Files(folder / "gt.json", folder / "results.json")
    stamp = folder / "made-from.json"
    wanted = {"generator": list(workload.generator_args), "repeats": workload.repeats}
    if _made(files, stamp, wanted):
        return files
    folder.mkdir(parents=True, exist_ok=True)
    gt, results = orjson.loads(base.gt.read_bytes()), orjson.loads(base.results.read_bytes())
    images = 1 + max(image["id"] for image in gt["images"])
    boxes = 1 + max(annotation["id"] for annotation in gt["annotations"])
    copies = range(workload.repeats)
    gt["images"] = [
        {**image, "id": image["id"] + n * images, "file_name": f"{n}_{image['file_name']}"}
        for n in copies
        for image in gt["images"]
    ]
    gt["annotations"] = [
        {**box, "id": box["id"] + n * boxes, "image_id": box["image_id"] + n * images}
        for n in copies
        for box in gt["annotations"]
    ]
    results = [{**found, "image_id": found["image_id"] + n * images} for n in copies for found in results]
    files.gt.write_bytes(orjson.dumps(gt))
    files.results.write_bytes(orjson.dumps(results))
    stamp.write_text(json.dumps(wanted))
    return files


def ensure_data(workload: Workload, work_dir: Path, generator: Path) -> Files:
    """The workload's files (two folders of JSONL shards when it is tiled), made unless up to date."""
    files = _ensure_coco(workload, work_dir, generator)
    if not workload.tiles:
        return files
    folder = work_dir / workload.name
    stamp = folder / "made-from.json"
    wanted = {"generator": list(workload.generator_args), "tiles": workload.tiles}
    if not (stamp.exists() and json.loads(stamp.read_text()) == wanted):
        print(f"[bench] writing {workload.name}: {workload.tiles} tile(s) of JSONL shards", file=sys.stderr)
        write_shards(files.gt, files.results, folder, workload.tiles)
        stamp.write_text(json.dumps(wanted))
    return Files(folder / "gt", folder / "pred")


def count_boxes(files: Files) -> dict[str, int]:
    """Boxes in two folders of JSONL shards: one `{"label"` per box (a byte count, no parsing)."""
    shards = sorted(files.gt.iterdir())
    gt = sum(path.read_bytes().count(b'{"label"') for path in shards)
    pred = sum(path.read_bytes().count(b'{"label"') for path in sorted(files.results.iterdir()))
    return {"gt": gt, "pred": pred, "shards": len(shards)}
