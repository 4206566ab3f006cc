"""Real image files for the datasets whose annotation files are all we have: made with Pillow.

Each picture is a sky-and-ground scene with its ground-truth boxes painted in as shapes (a colour
per class) and some grain, so that a thumbnail looks like a photo of objects, and a box drawn
over it can be checked against what is under it.
"""

from __future__ import annotations

import json
import random
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter

Box = tuple[str, float, float, float, float]  # class, x_min, y_min, x_max, y_max (pixels)


def _colour(name: str) -> tuple[int, int, int]:
    hashed = zlib.crc32(name.encode("utf-8"))
    return (60 + hashed % 180, 60 + (hashed >> 8) % 180, 60 + (hashed >> 16) % 180)


def scene(width: int, height: int, boxes: Sequence[Box], seed: int = 0) -> Image.Image:
    """A picture of `width` x `height` with `boxes` painted in."""
    rng = random.Random(seed)
    picture = Image.new("RGB", (width, height))
    draw = ImageDraw.Draw(picture)
    horizon = int(height * rng.uniform(0.35, 0.6))
    for y in range(height):
        sky = y < horizon
        shade = y / max(horizon, 1) if sky else (y - horizon) / max(height - horizon, 1)
        colour = (
            (110 + int(80 * shade), 150 + int(60 * shade), 220) if sky else (90, 120 - int(40 * shade), 60)
        )
        draw.line([(0, y), (width, y)], fill=colour)
    for name, x0, y0, x1, y1 in sorted(boxes, key=lambda b: (b[3] - b[1]) * (b[4] - b[2]), reverse=True):
        fill = _colour(name)
        if zlib.crc32(name.encode("utf-8")) % 2:
            draw.ellipse([x0, y0, x1, y1], fill=fill, outline=(20, 20, 20))
        else:
            draw.rounded_rectangle(
                [x0, y0, x1, y1], radius=max(1, (x1 - x0) // 6), fill=fill, outline=(20, 20, 20)
            )
    grain = Image.effect_noise((width, height), 28).convert("RGB")
    return Image.blend(picture.filter(ImageFilter.GaussianBlur(0.6)), grain, 0.12)


def write_picture(path: Path, picture: Image.Image, image_format: str = "JPEG") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    picture.save(path, image_format, quality=90)
    return path


def coco_pictures(gt_path: Path, folder: Path, limit: int | None = None) -> list[Path]:
    """A JPEG per image of a COCO GT file, named by its `file_name`, its boxes painted in."""
    document = json.loads(gt_path.read_text(encoding="utf-8"))
    names = {category["id"]: category["name"] for category in document["categories"]}
    boxes: dict[int, list[Box]] = {}
    for item in document["annotations"]:
        x, y, w, h = item["bbox"]
        boxes.setdefault(item["image_id"], []).append((names[item["category_id"]], x, y, x + w, y + h))
    images = document["images"][:limit]
    return [
        write_picture(
            folder / image["file_name"], scene(image["width"], image["height"], boxes.get(image["id"], []), n)
        )
        for n, image in enumerate(images)
    ]


def yolo_pictures(
    labels: Path,
    images: Path,
    names: Sequence[str],
    size: tuple[int, int],
    stems: Iterable[str] | None = None,
) -> list[Path]:
    """A JPEG in `images` per YOLO label file in `labels` (same relative path), its boxes painted in."""
    width, height = size
    written = []
    for n, label in enumerate(sorted(labels.rglob("*.txt"))):
        if stems is not None and label.stem not in stems:
            continue
        boxes: list[Box] = []
        for line in label.read_text(encoding="utf-8").splitlines():
            cls, cx, cy, w, h = line.split()[:5]
            x, y, bw, bh = float(cx) * width, float(cy) * height, float(w) * width, float(h) * height
            boxes.append((names[int(cls)], x - bw / 2, y - bh / 2, x + bw / 2, y + bh / 2))
        target = images / label.relative_to(labels).with_suffix(".jpg")
        written.append(write_picture(target, scene(width, height, boxes, n)))
    return written
