"""Write a dataset as a folder of native JSONL shards (the layout workers read on their own)."""

from __future__ import annotations

from pathlib import Path

import orjson

from handler.boxes import Dataset
from handler.datasets import load_dataset
from handler.datasets.reading import Loaded
from handler.storage import open_source


def _asset_lines(dataset: Dataset, order: list[str]) -> list[bytes]:
    """One native asset object per line, for the assets in `order` (no boxes where absent)."""
    position = {asset_id: i for i, asset_id in enumerate(dataset.asset_ids)}
    boxes = dataset.boxes
    per_image: dict[int, list[dict[str, object]]] = {}
    for row in range(len(boxes)):
        x_min, y_min, x_max, y_max = boxes.xyxy[row].tolist()
        annotation: dict[str, object] = {
            "label": dataset.class_names[int(boxes.class_id[row])],
            "x_min": x_min,
            "y_min": y_min,
            "x_max": x_max,
            "y_max": y_max,
            "confidence": float(boxes.confidence[row]),
        }
        per_image.setdefault(int(boxes.image[row]), []).append(annotation)
    lines = []
    for asset_id in order:
        i = position.get(asset_id)
        asset: dict[str, object] = {
            "asset_id": asset_id,
            "annotations": per_image.get(i, []) if i is not None else [],
        }
        if i is not None and dataset.widths[i] == dataset.widths[i]:
            asset.update(width=float(dataset.widths[i]), height=float(dataset.heights[i]))
        lines.append(orjson.dumps(asset))
    return lines


def write_shards(gt_ref: Path, pred_ref: Path, out: Path, per_shard: int) -> tuple[Path, Path]:
    """GT and predictions as `out/gt/NNNN.jsonl` and `out/pred/NNNN.jsonl`, shard i of each
    holding the same assets (the GT's, in its order)."""
    gt: Loaded = load_dataset(open_source(str(gt_ref)))
    pred = load_dataset(open_source(str(pred_ref)), None, gt)
    order = list(gt.dataset.asset_ids)
    folders = out / "gt", out / "pred"
    for folder, dataset in zip(folders, (gt.dataset, pred.dataset), strict=True):
        folder.mkdir(parents=True, exist_ok=True)
        lines = _asset_lines(dataset, order)
        for shard, start in enumerate(range(0, len(lines), per_shard)):
            (folder / f"{shard:04d}.jsonl").write_bytes(b"\n".join(lines[start : start + per_shard]) + b"\n")
    return folders
