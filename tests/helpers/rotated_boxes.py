"""One small rotated dataset, as each labeling tool writes it: the boxes (centre, size, angle)
drawn once, then written by datumaro (CVAT for images 1.1, DOTA) and by Label Studio (its JSON
export and its YOLO OBB export, made by the real server in helpers/label_studio_prepared.py).

The ground truth turns every box by some angle; the predictions are the GT boxes moved, resized
and turned a little more (some a lot, some dropped), plus a few boxes of their own, each with a
score, so that every outcome occurs. The images are not square: a frame or pivot read wrong
shows."""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

from handler.boxes import Dataset
from handler.engine.rotated import corners
from helpers.builders import write_json
from helpers.reference import polygon

IMAGES: Final = (("a.jpg", 640, 360), ("b.jpg", 320, 480), ("c.jpg", 500, 500), ("d.jpg", 800, 200))
LABELS: Final = ("plane", "ship")
SIZES: Final = {name: (width, height) for name, width, height in IMAGES}
SEED: Final = 38


@dataclass(frozen=True)
class Turned:
    """A rotated box: centre, size, degrees clockwise on the image about the centre."""

    label: str
    cx: float
    cy: float
    w: float
    h: float
    angle: float
    score: float | None = None

    @property
    def xyxy(self) -> tuple[float, float, float, float]:
        """The box before turning."""
        return (self.cx - self.w / 2, self.cy - self.h / 2, self.cx + self.w / 2, self.cy + self.h / 2)

    def corners(self) -> list[tuple[float, float]]:
        """Top-left, top-right, bottom-right, bottom-left of the box before turning, turned."""
        return polygon(self.xyxy, self.angle)


def _box(rng: random.Random, width: int, height: int, label: str | None = None) -> Turned:
    w, h = rng.uniform(20, min(width, height) / 3), rng.uniform(10, min(width, height) / 4)
    reach = math.hypot(w, h) / 2
    return Turned(
        label or rng.choice(LABELS),
        rng.uniform(reach, width - reach),
        rng.uniform(reach, height - reach),
        w,
        h,
        rng.choice((0.0, rng.uniform(-89, 89), rng.uniform(-179, 179))),
    )


def _predicted(rng: random.Random, box: Turned) -> Turned | None:
    kind = rng.choice(("close", "close", "shifted", "confused", "dropped"))
    if kind == "dropped":
        return None
    move = 2.0 if kind != "shifted" else box.w / 3
    label = box.label if kind != "confused" else next(name for name in LABELS if name != box.label)
    return Turned(
        label,
        box.cx + rng.uniform(-move, move),
        box.cy + rng.uniform(-move, move),
        box.w * rng.uniform(0.95, 1.05),
        box.h * rng.uniform(0.95, 1.05),
        box.angle + rng.uniform(-3, 3) + (25.0 if kind == "shifted" else 0.0),
        round(rng.uniform(0.3, 0.99), 3),
    )


def rotated_dataset() -> tuple[dict[str, list[Turned]], dict[str, list[Turned]]]:
    """(GT, predictions), each by image name."""
    rng = random.Random(SEED)
    gt: dict[str, list[Turned]] = {}
    pred: dict[str, list[Turned]] = {}
    for name, width, height in IMAGES:
        gt[name] = [_box(rng, width, height) for _ in range(rng.randint(3, 6))]
        predicted = [p for p in (_predicted(rng, box) for box in gt[name]) if p is not None]
        extra = [_box(rng, width, height) for _ in range(rng.randint(0, 2))]
        pred[name] = predicted + [Turned(**{**e.__dict__, "score": 0.5}) for e in extra]
    return gt, pred


def label_studio_region(box: Turned, width: int, height: int, control: str = "label") -> dict[str, Any]:
    """A region as Label Studio's editor writes it: the top-left corner after turning, in percent,
    and the turn about it (label_studio_sdk.converter.utils.convert_yolo_obb_to_annotation)."""
    x, y = box.corners()[0]
    region: dict[str, Any] = {
        "from_name": control,
        "to_name": "image",
        "type": "rectanglelabels",
        "original_width": width,
        "original_height": height,
        "image_rotation": 0,
        "value": {
            "x": 100.0 * x / width,
            "y": 100.0 * y / height,
            "width": 100.0 * box.w / width,
            "height": 100.0 * box.h / height,
            "rotation": box.angle % 360,
            "rectanglelabels": [box.label],
        },
    }
    if box.score is not None:
        region["score"] = box.score
    return region


def write_datumaro(folder: Path, boxes: dict[str, list[Turned]], format_name: str) -> Path:
    """The boxes written by datumaro's exporter of `format_name` ("cvat" or "dota"); the folder."""
    import datumaro as dm
    from datumaro.components.annotation import RotatedBbox
    from datumaro.components.media import Image

    index = {name: i for i, name in enumerate(LABELS)}
    sizes = {name: (width, height) for name, width, height in IMAGES}
    items = [
        dm.DatasetItem(
            id=Path(name).stem,
            media=Image.from_file(path=name, size=(sizes[name][1], sizes[name][0])),
            annotations=[
                RotatedBbox(b.cx, b.cy, b.w, b.h, b.angle, label=index[b.label], attributes=_attributes(b))
                for b in shapes
            ],
        )
        for name, shapes in boxes.items()
    ]
    dataset = dm.Dataset.from_iterable(items, categories=list(LABELS))
    options = {"allow_undeclared_attrs": True} if format_name == "cvat" else {}  # the score attribute
    dataset.export(str(folder), format_name, save_media=False, **options)
    return folder


def _attributes(box: Turned) -> dict[str, Any]:
    return {} if box.score is None else {"score": box.score}


def write_native(folder: Path, boxes: dict[str, list[Turned]]) -> Path:
    assets = [
        {
            "asset_id": name,
            "width": SIZES[name][0],
            "height": SIZES[name][1],
            "annotations": [
                {
                    "label": b.label,
                    **dict(zip(("x_min", "y_min", "x_max", "y_max"), b.xyxy, strict=True)),
                    "rotation": b.angle,
                    **({} if b.score is None else {"confidence": b.score}),
                }
                for b in boxes[name]
            ],
        }
        for name in SIZES
    ]
    return write_json(folder / "native.json", {"assets": assets})


def write_sizes(folder: Path) -> None:
    """The images' sizes beside a folder of labels (`sizes.json`), as our text readers take them."""
    (folder / "sizes.json").write_text(json.dumps({name: list(size) for name, size in SIZES.items()}))


def corner_sets(dataset: Dataset) -> dict[str, list[list[tuple[float, float]]]]:
    """Each image's boxes (by file stem) as sorted corner points, rounded: the same rectangle
    whichever angle names it."""
    points = np.round(corners(dataset.boxes.xyxy, dataset.boxes.angle), 3)
    found: dict[str, list[list[tuple[float, float]]]] = {Path(name).stem: [] for name in dataset.asset_ids}
    for row, image in enumerate(dataset.boxes.image.tolist()):
        found[Path(dataset.asset_ids[image]).stem].append(sorted((x, y) for x, y in points[row].tolist()))
    return found


def expected_corners(boxes: dict[str, list[Turned]]) -> dict[str, list[list[tuple[float, float]]]]:
    return {
        Path(name).stem: [sorted((round(x, 3), round(y, 3)) for x, y in b.corners()) for b in boxes[name]]
        for name in SIZES
    }


def same_boxes(dataset: Dataset, boxes: dict[str, list[Turned]]) -> None:
    assert dataset.skipped_count == 0
    got, want = corner_sets(dataset), expected_corners(boxes)
    for name in want:
        assert len(got[name]) == len(want[name]), name
        for a, b in zip(sorted(got[name]), sorted(want[name]), strict=True):
            np.testing.assert_allclose(a, b, atol=0.02)  # datumaro writes 2 decimals
