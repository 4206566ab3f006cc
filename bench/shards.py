"""A generated COCO workload as native JSONL shards for GT and predictions, tiled with renamed
asset ids (tile t names image i `t<t>-<i>`) to reach a multiple of its images."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import numpy as np
import orjson

from bench.jsonl import IntArray, asset_header, box_record, shard_bytes

ASSETS_PER_SHARD: Final = 1000
_ID_DIGITS: Final = 6
_SIZE_DIGITS: Final = 5
_COORDINATE_DIGITS: Final = 7  # hundredths: up to 99999.99 px
_SCORE_DECIMALS: Final = 5  # gen_workload.py rounds scores to 5 decimals


def _cents(values: Any) -> IntArray:
    return np.rint(np.asarray(values, dtype=np.float64) * 100).astype(np.int64)


def _columns(entries: list[dict[str, Any]], image_index: dict[int, int], scored: bool) -> dict[str, IntArray]:
    """xyxy in hundredths, class, image position and (results) score of COCO entries, by image."""
    bbox = _cents([e["bbox"] for e in entries]).reshape(-1, 4)
    columns = {
        "asset": np.array([image_index[e["image_id"]] for e in entries], dtype=np.int64),
        "class_id": np.array([e["category_id"] for e in entries], dtype=np.int64),
        "x_min": bbox[:, 0],
        "y_min": bbox[:, 1],
        "x_max": bbox[:, 0] + bbox[:, 2],
        "y_max": bbox[:, 1] + bbox[:, 3],
    }
    if scored:
        columns["confidence"] = np.rint(np.array([e["score"] for e in entries]) * 10**_SCORE_DECIMALS)
        columns["confidence"] = columns["confidence"].astype(np.int64)
    order = np.argsort(columns["asset"], kind="stable")
    return {name: column[order] for name, column in columns.items()}


def _write_side(
    folder: Path, images: dict[str, IntArray], boxes: dict[str, IntArray], scored: bool, tiles: int
) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    record = box_record(_COORDINATE_DIGITS, _SCORE_DECIMALS if scored else None)
    n_images = len(images["id"])
    bounds = np.searchsorted(boxes["asset"], np.arange(0, n_images + ASSETS_PER_SHARD, ASSETS_PER_SHARD))
    for tile in range(tiles):
        header = asset_header(f"t{tile:02d}-".encode(), _ID_DIGITS, _SIZE_DIGITS)
        for shard, start in enumerate(range(0, n_images, ASSETS_PER_SHARD)):
            own = slice(start, start + ASSETS_PER_SHARD)
            rows = slice(bounds[shard], bounds[shard + 1])
            part = {name: column[rows] for name, column in boxes.items()}
            part["asset"] = part["asset"] - start
            data = shard_bytes(header, {k: v[own] for k, v in images.items()}, record, part, part["asset"])
            (folder / f"part-{tile:02d}-{shard:04d}.jsonl").write_bytes(data)


def write_shards(gt_json: Path, results_json: Path, out: Path, tiles: int) -> None:
    """out/gt and out/pred: the COCO workload's images `tiles` times, ASSETS_PER_SHARD per shard."""
    gt = orjson.loads(gt_json.read_bytes())
    image_index = {image["id"]: i for i, image in enumerate(gt["images"])}
    images = {
        "id": np.arange(len(gt["images"]), dtype=np.int64),
        "width": np.array([image["width"] for image in gt["images"]], dtype=np.int64),
        "height": np.array([image["height"] for image in gt["images"]], dtype=np.int64),
    }
    objects = [a for a in gt["annotations"] if not a.get("iscrowd")]
    _write_side(out / "gt", images, _columns(objects, image_index, False), False, tiles)
    results = orjson.loads(results_json.read_bytes())
    _write_side(out / "pred", images, _columns(results, image_index, True), True, tiles)
