"""Export mistakes made on purpose: a clean COCO results list written wrongly.

Each mistake is one of those people make every week, built from a real pair of files; the
"did you mean" re-scoring must name the reading that undoes it, and applying that reading
must give back the clean score.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import orjson
from pycocotools import mask as coco_mask

from handler.engine.counts import OutcomeCounts
from handler.execution import ExecutionOptions, evaluate_plan, read_and_plan
from handler.features import ANALYSES
from handler.inputs import parse_inputs
from handler.readings.verdict import Rescored
from handler.storage.local import LocalStore

Results = list[dict[str, Any]]
Mistake = Callable[[dict[str, Any], Results], Results]
SEED: Final = 24


def _sizes(gt: dict[str, Any]) -> dict[int, tuple[float, float]]:
    return {image["id"]: (float(image["width"]), float(image["height"])) for image in gt["images"]}


def confused(gt: dict[str, Any], results: Results, share: float = 0.1) -> Results:
    """The detector itself confuses `share` of its classes: each box of those, one by one, gets
    another class at random (a real detector's confusions, not a mapping)."""
    rng = np.random.default_rng(SEED)
    ids = sorted(category["id"] for category in gt["categories"])
    used = sorted({r["category_id"] for r in results})
    chosen = set(rng.choice(used, max(1, round(share * len(used))), replace=False).tolist())
    return [{**r, "category_id": int(rng.choice(ids))} if r["category_id"] in chosen else r for r in results]


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


def one_based(gt: dict[str, Any], results: Results) -> Results:
    """The place in the category list counted from 1 written as `category_id` (a YOLO validator's
    `class index + 1` for a dataset not named COCO)."""
    place = {category["id"]: i + 1 for i, category in enumerate(gt["categories"])}
    return [{**r, "category_id": place[r["category_id"]]} for r in results]


def tf_normalised(gt: dict[str, Any], results: Results) -> Results:
    """TF object detection's `[ymin, xmin, ymax, xmax]`, normalised, written as `bbox`."""
    sizes = _sizes(gt)
    out = []
    for r in results:
        width, height = sizes[r["image_id"]]
        x, y, w, h = r["bbox"]
        out.append({**r, "bbox": [y / height, x / width, (y + h) / height, (x + w) / width]})
    return out


def normalised_hw(gt: dict[str, Any], results: Results) -> Results:
    """Normalised boxes scaled back by (height, width) instead of (width, height)."""
    sizes = _sizes(gt)
    out = []
    for r in results:
        width, height = sizes[r["image_id"]]
        x, y, w, h = r["bbox"]
        out.append(
            {**r, "bbox": [x / width * height, y / height * width, w / width * height, h / height * width]}
        )
    return out


def letterboxed_top_left(side: int) -> Mistake:
    """Boxes in a `side` square input with the image at its top-left (YOLOX: a scale, no offset)."""

    def mistake(gt: dict[str, Any], results: Results) -> Results:
        sizes = _sizes(gt)
        out = []
        for r in results:
            width, height = sizes[r["image_id"]]
            ratio = side / max(width, height)
            out.append({**r, "bbox": [v * ratio for v in r["bbox"]]})
        return out

    return mistake


def letterboxed_rect(side: int, stride: int) -> Mistake:
    """Boxes in the minimal-rectangle letterbox: long side at `side`, the short side padded to a
    multiple of `stride`, half the pad each side (a YOLO validator's `rect` batches)."""

    def mistake(gt: dict[str, Any], results: Results) -> Results:
        sizes = _sizes(gt)
        out = []
        for r in results:
            width, height = sizes[r["image_id"]]
            ratio = side / max(width, height)
            pads = [(-(-round(s * ratio, 6) // stride) * stride - s * ratio) / 2 for s in (width, height)]
            x, y, w, h = r["bbox"]
            out.append({**r, "bbox": [x * ratio + pads[0], y * ratio + pads[1], w * ratio, h * ratio]})
        return out

    return mistake


def grown(factor: float) -> Mistake:
    """A model's habit, not a file's mistake: every box `factor` times larger about its centre."""

    def habit(_: dict[str, Any], results: Results) -> Results:
        out = []
        for r in results:
            x, y, w, h = r["bbox"]
            out.append(
                {**r, "bbox": [x - w * (factor - 1) / 2, y - h * (factor - 1) / 2, w * factor, h * factor]}
            )
        return out

    return habit


def shifted(pixels: float) -> Mistake:
    """A model's habit: every box a few pixels right and down, whatever the image's size."""
    return lambda _, results: [
        {**r, "bbox": [r["bbox"][0] + pixels, r["bbox"][1] + pixels, *r["bbox"][2:]]} for r in results
    ]


def gt_corners(gt: dict[str, Any]) -> dict[str, Any]:
    """A ground truth whose `bbox` a converter wrote as [x1, y1, x2, y2]."""
    annotations = [
        {**a, "bbox": [x, y, x + w, y + h]} for a in gt["annotations"] for x, y, w, h in [a["bbox"]]
    ]
    return {**gt, "annotations": annotations}


def gt_corners_on(part: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A ground truth whose `bbox` a second annotation tool wrote as [x1, y1, x2, y2] on part of it:
    every other box of each image (`part` "boxes") or every other image ("images")."""

    def edit(gt: dict[str, Any]) -> dict[str, Any]:
        seen: dict[int, int] = {}
        images = {image["id"] for image in sorted(gt["images"], key=lambda i: i["id"])[::2]}
        annotations = []
        for a in gt["annotations"]:
            place = seen.get(a["image_id"], 0)
            seen[a["image_id"]] = place + 1
            chosen = place % 2 == 1 if part == "boxes" else a["image_id"] in images
            x, y, w, h = a["bbox"]
            annotations.append({**a, "bbox": [x, y, x + w, y + h]} if chosen else a)
        return {**gt, "annotations": annotations}

    return edit


def gt_normalised(gt: dict[str, Any]) -> dict[str, Any]:
    """A ground truth whose `bbox` a converter wrote in 0-1 fractions of its image."""
    sizes = _sizes(gt)
    annotations = []
    for a in gt["annotations"]:
        width, height = sizes[a["image_id"]]
        x, y, w, h = a["bbox"]
        annotations.append({**a, "bbox": [x / width, y / height, w / width, h / height]})
    return {**gt, "annotations": annotations}


def centred(_: dict[str, Any], results: Results) -> Results:
    """`bbox` written as [cx, cy, w, h] (a YOLO-style centre dumped as COCO)."""
    return [{**r, "bbox": [x + w / 2, y + h / 2, w, h]} for r in results for x, y, w, h in [r["bbox"]]]


def scaled(factor: float) -> Mistake:
    """Every coordinate multiplied by `factor` (boxes of another resolution of the images)."""

    def mistake(_: dict[str, Any], results: Results) -> Results:
        return [{**r, "bbox": [v * factor for v in r["bbox"]]} for r in results]

    return mistake


def rescored(full_scale: float) -> Mistake:
    """Confidences written on a 0-`full_scale` scale (a percentage, a byte) instead of 0-1."""
    return lambda _, results: [{**r, "score": r["score"] * full_scale} for r in results]


# The public datasets' two spellings of one class (Pascal VOC's and COCO's), either way.
OTHER_SPELLING: Final = {
    "aeroplane": "airplane",
    "motorbike": "motorcycle",
    "sofa": "couch",
    "tvmonitor": "tv",
    "airplane": "aeroplane",
    "motorcycle": "motorbike",
    "couch": "sofa",
    "tv": "tvmonitor",
}


# COCO's names as Open Images and Objects365 write them (a detector trained on those, its labels kept).
OPEN_IMAGES: Final = {
    "tv": "Television",
    "cell phone": "Mobile phone",
    "donut": "Doughnut",
    "mouse": "Computer mouse",
    "potted plant": "Houseplant",
    "frisbee": "Flying disc",
    "cow": "Cattle",
    "dining table": "Dinning Table",
    "handbag": "Handbag/Satchel",
    "skis": "Skiboard",
    "suitcase": "Luggage",
    "hair drier": "Hair Dryer",
    "microwave": "Microwave oven",
    "remote": "Remote control",
    "person": "People",
}


def plural(name: str) -> str:
    """A class name as a plural label (`cars`, `buses`): a trainer's own folder names."""
    return name + ("es" if name.endswith(("s", "x", "ch", "sh")) else "s")


def spelled(spelling: Callable[[str], str]) -> Mistake:
    """`category_id` written as the class's name spelled by `spelling` (a trainer's own label strings;
    a name already written stays)."""

    def mistake(gt: dict[str, Any], results: Results) -> Results:
        name = {category["id"]: spelling(category["name"]) for category in gt["categories"]}
        return [{**r, "category_id": name.get(r["category_id"], r["category_id"])} for r in results]

    return mistake


def unrelated(name: str) -> str:
    """A label string no spelling rule links to `name` (a trainer's own, made up)."""
    return f"label-{zlib.crc32(name.encode()):08x}"


def on_images(share: float, mistake: Mistake, seed: int = SEED) -> Mistake:
    """`mistake` made on a random `share` of the images only (a step of the pipeline that ran on
    some of the pictures)."""

    def partial(gt: dict[str, Any], results: Results) -> Results:
        images = sorted({r["image_id"] for r in results})
        chosen = set(
            np.random.default_rng(seed).choice(images, round(share * len(images)), replace=False).tolist()
        )
        return mistake(gt, [r for r in results if r["image_id"] in chosen]) + [
            r for r in results if r["image_id"] not in chosen
        ]

    return partial


def on_classes(share: float, mistake: Mistake, seed: int = SEED) -> Mistake:
    """`mistake` made on the boxes of a random `share` of the classes only (a second model's boxes,
    merged in, within every picture)."""

    def partial(gt: dict[str, Any], results: Results) -> Results:
        classes = sorted({r["category_id"] for r in results})
        count = max(1, round(share * len(classes)))
        chosen = set(np.random.default_rng(seed).choice(classes, count, replace=False).tolist())
        return mistake(gt, [r for r in results if r["category_id"] in chosen]) + [
            r for r in results if r["category_id"] not in chosen
        ]

    return partial


def chained(*mistakes: Mistake) -> Mistake:
    """The mistakes made one after the other (a step that made two: letterboxed, then written as corners)."""

    def made(gt: dict[str, Any], results: Results) -> Results:
        for mistake in mistakes:
            results = mistake(gt, results)
        return results

    return made


def on_boxes(mistake: Mistake) -> Mistake:
    """`mistake` made on every other box of each image, whatever its class (two writers of one file:
    a merge of two exports box by box)."""

    def partial(gt: dict[str, Any], results: Results) -> Results:
        seen: dict[int, int] = {}
        chosen = []
        for result in results:
            chosen.append(seen.get(result["image_id"], 0) % 2 == 1)
            seen[result["image_id"]] = seen.get(result["image_id"], 0) + 1
        made = iter(mistake(gt, [r for r, c in zip(results, chosen, strict=True) if c]))
        return [next(made) if c else r for r, c in zip(results, chosen, strict=True)]

    return partial


def rle_row_major(_: dict[str, Any], results: Results) -> Results:
    """Each result's RLE mask with its runs counted row by row (a bitmap's own order) where COCO
    counts them column by column: what `mask.encode` of a C-order array's transpose writes."""
    found = []
    for result in results:
        segmentation = result["segmentation"]
        bitmap = coco_mask.decode(segmentation)
        runs = coco_mask.encode(np.asfortranarray(bitmap.T))["counts"].decode()
        found.append({**result, "segmentation": {"size": segmentation["size"], "counts": runs}})
    return found


def gt_polygons_in(full_scale: float) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The GT's polygon points divided by each image's size, times `full_scale` (1: normalised,
    100: percent, as Label Studio writes them); boxes as they are."""

    def edit(gt: dict[str, Any]) -> dict[str, Any]:
        sizes = _sizes(gt)
        annotations = []
        for annotation in gt["annotations"]:
            polygons = annotation["segmentation"]
            if isinstance(polygons, list):
                width, height = sizes[annotation["image_id"]]
                scale = np.array([full_scale / width, full_scale / height])
                polygons = [(np.reshape(p, (-1, 2)) * scale).reshape(-1).tolist() for p in polygons]
            annotations.append({**annotation, "segmentation": polygons})
        return {**gt, "annotations": annotations}

    return edit


def write_mistake(gt_path: Path, results_path: Path, mistakes: list[Mistake], out: Path) -> Path:
    gt = orjson.loads(gt_path.read_bytes())
    results = orjson.loads(results_path.read_bytes())
    for mistake in mistakes:
        results = mistake(gt, results)
    out.write_bytes(orjson.dumps(results))
    return out


def weak_model(
    gt: dict[str, Any], seed: int, miss: float, confuse: float, extra: float, jitter: float
) -> Results:
    """An honest weak model: each GT box missed with `miss`, its class replaced by a random one with
    `confuse`, its corners moved by `jitter` of its size at random, and `extra` invented boxes per
    kept one, with random confidences (the boxes are in the GT's own frame and convention)."""
    rng = np.random.default_rng(seed)
    ids = [category["id"] for category in gt["categories"]]
    sizes = _sizes(gt)
    found: Results = []
    annotations = [a for a in gt["annotations"] if not a.get("iscrowd")]
    for annotation in annotations:
        if rng.random() < miss:
            continue
        x, y, w, h = annotation["bbox"]
        dx, dy, dw, dh = rng.normal(0, jitter, 4) * [w, h, w, h]
        category = int(rng.choice(ids)) if rng.random() < confuse else annotation["category_id"]
        box = [float(x + dx), float(y + dy), float(max(1.0, w + dw)), float(max(1.0, h + dh))]
        found.append(
            {
                "image_id": annotation["image_id"],
                "category_id": category,
                "bbox": box,
                "score": float(rng.random()),
            }
        )
    images = list(sizes)
    for _ in range(int(extra * len(found))):
        image = images[int(rng.integers(len(images)))]
        width, height = sizes[image]
        w, h = rng.uniform(0.05, 0.5) * width, rng.uniform(0.05, 0.5) * height
        box = [float(rng.uniform(0, width - w)), float(rng.uniform(0, height - h)), float(w), float(h)]
        found.append(
            {
                "image_id": image,
                "category_id": int(rng.choice(ids)),
                "bbox": box,
                "score": float(rng.random()),
            }
        )
    return found


@dataclass(frozen=True)
class Weighed:
    """A run's score as read, and the reading the re-scoring proposes (None: none)."""

    score: float
    grade: str
    found: Rescored | None
    seconds: float  # the re-scoring's own time


def weigh(gt: Path, pred: Path, store: Path, threshold: str = "0.5", **read: str) -> Weighed:
    """Evaluate `pred` against `gt` as the node does, then re-score the other readings."""
    raw = {"GT_DATASET": str(gt), "PRED_DATASET": str(pred), "CONFIDENCE_THRESHOLD": threshold, **read}
    inputs = parse_inputs(raw)
    plan = read_and_plan(inputs, LocalStore(store), ExecutionOptions(workers=1), ANALYSES)
    state = evaluate_plan(plan, None).state
    started = time.perf_counter()
    found = plan.sides.best_reading(state, inputs.thresholds) if plan.sides else None
    counts = OutcomeCounts(state.tally.counts)
    return Weighed(counts.score, counts.grade, found, time.perf_counter() - started)


def rewrite_lines(folder: Path, out: Path, edit: Callable[[list[str]], list[str]]) -> Path:
    """A copy of a text label folder with each line's tokens passed through `edit`."""
    out.mkdir(parents=True, exist_ok=True)
    for file in sorted(folder.glob("*.txt")):
        lines = [" ".join(edit(line.split())) for line in file.read_text().splitlines() if line.strip()]
        (out / file.name).write_text("\n".join(lines) + "\n")
    return out


def corners_to_size(tokens: list[str]) -> list[str]:
    """`class score x1 y1 x2 y2` written as `class score x y w h` (a Cartucho line)."""
    x1, y1, x2, y2 = map(float, tokens[-4:])
    return [*tokens[:-4], *(f"{v:g}" for v in (x1, y1, x2 - x1, y2 - y1))]


def renamed(mapping: dict[str, str]) -> Callable[[list[str]], list[str]]:
    """Each line's class name replaced by `mapping`'s (class names in another order)."""
    return lambda tokens: [mapping.get(tokens[0], tokens[0]), *tokens[1:]]


def random_weak_model(gt: Path, seed: int, out: Path) -> Path:
    """A weak model of `gt` at random rates (missed 0-70 %, confused 0-60 %, jittered 0-30 % of the
    box size, 0-1.5 invented boxes per kept one), written to `out`: one false-alarm trial."""
    rng = np.random.default_rng(seed)
    rates = {
        "miss": rng.uniform(0, 0.7),
        "confuse": rng.uniform(0, 0.6),
        "extra": rng.uniform(0, 1.5),
        "jitter": rng.uniform(0, 0.3),
    }
    out.write_bytes(orjson.dumps(weak_model(orjson.loads(gt.read_bytes()), seed, **rates)))
    return out
