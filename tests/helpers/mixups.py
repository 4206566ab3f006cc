"""Export mistakes made on purpose (issue 24): a clean COCO results list written wrongly.

Each mistake is one of those people make every week, built from a real pair of files; the
"did you mean" re-scoring must name the reading that undoes it, and applying that reading
must give back the clean score.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import numpy as np
import orjson

Results = list[dict[str, Any]]
Mistake = Callable[[dict[str, Any], Results], Results]
SEED: Final = 24


def _sizes(gt: dict[str, Any]) -> dict[int, tuple[float, float]]:
    return {image["id"]: (float(image["width"]), float(image["height"])) for image in gt["images"]}


def confused(gt: dict[str, Any], results: Results, share: float = 0.1) -> Results:
    """The detector itself confuses `share` of its classes: each box of those gets another class."""
    rng = np.random.default_rng(SEED)
    ids = sorted(category["id"] for category in gt["categories"])
    used = sorted({r["category_id"] for r in results})
    chosen = set(rng.choice(used, max(1, round(share * len(used))), replace=False).tolist())
    others = {c: int(rng.choice([i for i in ids if i != c])) for c in chosen}
    return [{**r, "category_id": others.get(r["category_id"], r["category_id"])} for r in results]


def permuted(gt: dict[str, Any], results: Results) -> Results:
    """Category ids in another order: a one-to-one permutation of the GT's ids."""
    ids = sorted(category["id"] for category in gt["categories"])
    order = np.random.default_rng(SEED).permutation(ids).tolist()
    mapping = dict(zip(ids, order, strict=True))
    return [{**r, "category_id": mapping[r["category_id"]]} for r in results]


def yolo_index(gt: dict[str, Any], results: Results) -> Results:
    """A YOLO class index (0-based place in the category list) written as `category_id`."""
    place = {category["id"]: i for i, category in enumerate(gt["categories"])}
    return [{**r, "category_id": place[r["category_id"]]} for r in results]


def corners(_: dict[str, Any], results: Results) -> Results:
    """`bbox` written as [x1, y1, x2, y2] (a torchvision output dumped as is)."""
    return [{**r, "bbox": [x, y, x + w, y + h]} for r in results for x, y, w, h in [r["bbox"]]]


def normalised(gt: dict[str, Any], results: Results) -> Results:
    """Boxes normalised to 0-1 in a pixel file."""
    sizes = _sizes(gt)
    out = []
    for r in results:
        width, height = sizes[r["image_id"]]
        x, y, w, h = r["bbox"]
        out.append({**r, "bbox": [x / width, y / height, w / width, h / height]})
    return out


def letterboxed(side: int) -> Mistake:
    """Boxes left in the frame of a `side` by `side` letterboxed network input."""

    def mistake(gt: dict[str, Any], results: Results) -> Results:
        sizes = _sizes(gt)
        out = []
        for r in results:
            width, height = sizes[r["image_id"]]
            ratio = side / max(width, height)
            pad_x, pad_y = (side - width * ratio) / 2, (side - height * ratio) / 2
            x, y, w, h = r["bbox"]
            out.append({**r, "bbox": [x * ratio + pad_x, y * ratio + pad_y, w * ratio, h * ratio]})
        return out

    return mistake


def resized(side: int) -> Mistake:
    """Boxes left in the frame of a `side` by `side` stretched network input."""

    def mistake(gt: dict[str, Any], results: Results) -> Results:
        sizes = _sizes(gt)
        out = []
        for r in results:
            width, height = sizes[r["image_id"]]
            x, y, w, h = r["bbox"]
            sx, sy = side / width, side / height
            out.append({**r, "bbox": [x * sx, y * sy, w * sx, h * sy]})
        return out

    return mistake


def write_mistake(gt_path: Path, results_path: Path, mistakes: list[Mistake], out: Path) -> Path:
    gt = orjson.loads(gt_path.read_bytes())
    results = orjson.loads(results_path.read_bytes())
    for mistake in mistakes:
        results = mistake(gt, results)
    out.write_bytes(orjson.dumps(results))
    return out
