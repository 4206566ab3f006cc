"""Small builders of real dataset files for the tests."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

Box = tuple[str, float, float, float, float]  # label, x_min, y_min, x_max, y_max


def annotation(box: Box, confidence: float | None = None, **extra: Any) -> dict[str, Any]:
    label, x0, y0, x1, y1 = box
    result: dict[str, Any] = {"label": label, "x_min": x0, "y_min": y0, "x_max": x1, "y_max": y1}
    if confidence is not None:
        result["confidence"] = confidence
    result.update(extra)
    return result


def asset(
    asset_id: str, annotations: list[dict[str, Any]], width: int = 100, height: int = 100
) -> dict[str, Any]:
    return {"asset_id": asset_id, "width": width, "height": height, "annotations": annotations}


def write_json(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def write_jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def node_env(gt: Path | str, pred: Path | str, **inputs: str) -> dict[str, str]:
    return {"GT_DATASET": str(gt), "PRED_DATASET": str(pred), **inputs}


def write_tree(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Write `{relative path: content}` under `root` (a dataset folder)."""
    root.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root
