"""Label Studio: a JSON list of tasks, one per image of the report, each with one prediction (its
`model_version` naming the model, the policy and the report) whose `result` holds the pre-labels
as `rectanglelabels` regions in percent of `original_width` / `original_height`, each with its
`score`; and beside it (`.xml`) the labeling config the tasks fit: an `Image` named `image` and a
`RectangleLabels` named `label` listing the classes.

The prediction's `score` is its image's place in the report's review queue, 1 - its expected
seconds / the most any image needs (`task_scores`): sorted by "Prediction score" ascending, the
Data Manager lists the images as review_queue.csv does, the most correcting first. Each region's
`score` is its confidence.
`data.image` is the asset id (URL-quoted), after `--image-root` when given: a URL or path that
the user's Label Studio opens (`/data/local-files/?d=`, `s3://`, `https://`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePath
from typing import Final
from urllib.parse import quote

import numpy as np
import orjson

from handler.boxes import FloatArray, is_turned
from handler.datasets.labelstudio import LABEL_STUDIO as LABEL_STUDIO_FORMAT
from handler.errors import InputError
from handler.report.exports.columns_text import Piece, by_image, numbers, rows, texts
from handler.report.exports.mask_encodings import label_studio_brushes
from handler.report.exports.pre_labels import Block, ExportTarget, Files, PointText, PreLabels
from handler.report.exports.xml_text import quoteattr
from handler.report.json_lines import ObjectArray

CONTROL: Final = "label"  # the RectangleLabels control's name (`from_name`)
IMAGE: Final = "image"  # the Image object's name (`to_name`) and the task data key
CONFIG_SUFFIX: Final = ".xml"


# Each region type's labeling control, by the shape the pre-labels are written as.
CONTROLS: Final = {"box": "RectangleLabels", "mask": "BrushLabels", "polygon": "PolygonLabels"}


def labeling_config(class_names: list[str], shape: str = "box") -> str:
    """The `<View>` the tasks fit: one Image, one labels control of `shape` with a Label per class."""
    labels = "".join(f"    <Label value={quoteattr(name)}/>\n" for name in class_names)
    control = CONTROLS[shape]
    return (
        f'<View>\n  <Image name="{IMAGE}" value="${IMAGE}"/>\n'
        f'  <{control} name="{CONTROL}" toName="{IMAGE}">\n{labels}  </{control}>\n</View>\n'
    )


def config_path(out: PurePath) -> PurePath:
    if out.suffix == CONFIG_SUFFIX:
        raise InputError(
            f"{out}: the labeling config goes beside the tasks as {CONFIG_SUFFIX}; name them .json", "--out"
        )
    return out.with_suffix(CONFIG_SUFFIX)


def task_scores(seconds: FloatArray, most: float) -> FloatArray:
    """Per image, 1 - its expected seconds / `most`, the most of any image of the export: 0 for
    the most work, 1 for none (every image 1 when no image needs any)."""
    return np.round(1.0 - seconds / most, 6) if most > 0 else np.ones(len(seconds))


def _rectangles(labels: PreLabels) -> tuple[bytes, tuple[Piece, ...]]:
    """The regions' type and their values as rectangles: x, y, width, height in percent."""
    boxes = labels.boxes
    percent = 100 * labels.fractions("Label Studio")
    # The editor turns a box about its top-left corner: a rotated box's x, y are that corner turned.
    turned = is_turned(boxes.angle)
    if turned.any():
        percent[turned, :2] = 100 * labels.corners("fractions", "Label Studio")[turned, 0]
    return b"rectanglelabels", (
        b'"x":',
        numbers(percent[:, 0]),
        b',"y":',
        numbers(percent[:, 1]),
        b',"width":',
        numbers(percent[:, 2]),
        b',"height":',
        numbers(percent[:, 3]),
        b',"rotation":',
        numbers(np.remainder(boxes.angle, 360.0)),
    )


def _brushes(labels: PreLabels) -> tuple[bytes, tuple[Piece, ...]]:
    """The regions' type and their values as brushes: Label Studio's RLE of the image's RGBA picture."""
    streams = label_studio_brushes(labels.with_masks("Label Studio"))
    rle = np.empty(len(streams), dtype=object)
    rle[:] = [orjson.dumps(stream, option=orjson.OPT_SERIALIZE_NUMPY) for stream in streams]
    return b"brushlabels", (b'"format":"rle","rle":', rle)


def _polygons(labels: PreLabels) -> tuple[bytes, tuple[Piece, ...]]:
    """The regions' type and their values as polygons: points in percent."""
    points = labels.polygon_texts("fractions", PointText(b"[", b",", b"]", scale=100.0), b",")
    return b"polygonlabels", (b'"points":[', points, b'],"closed":true')


VALUES: Final = {"box": _rectangles, "mask": _brushes, "polygon": _polygons}


def _regions(block: Block) -> ObjectArray:
    """Each pre-label's region, its id `p<the box's row in the export>`."""
    labels = block.labels
    boxes = labels.boxes
    kind, value = VALUES[labels.shape](labels)
    widths, heights = boxes.widths[boxes.image], boxes.heights[boxes.image]
    sized = bool(np.isfinite(widths).all() and np.isfinite(heights).all())
    size: tuple[Piece, ...] = (
        (
            b',"original_width":',
            numbers(widths.astype(np.int64)),
            b',"original_height":',
            numbers(heights.astype(np.int64)),
        )
        if sized
        else ()
    )
    return rows(
        len(boxes),
        b'{"id":"p',
        numbers(np.arange(block.first_box, block.first_box + len(boxes))),
        f'","from_name":"{CONTROL}","to_name":"{IMAGE}","type":"'.encode() + kind + b'"',
        *size,
        b',"image_rotation":0,"value":{',
        *value,
        b',"' + kind + b'":[',
        texts(boxes.class_names, boxes.class_id, orjson.dumps),
        b']},"score":',
        numbers(boxes.confidence),
        b"}",
    )


def _tasks(block: Block, scores: FloatArray, image_root: str) -> bytes:
    """Some images' tasks, joined by `,\n`, with their images' `scores`."""
    labels = block.labels
    boxes = labels.boxes
    count = len(boxes.asset_ids)
    heads = rows(
        count,
        b'{"data":{"' + IMAGE.encode() + b'":',
        texts(boxes.asset_ids, np.arange(count), lambda asset: orjson.dumps(image_root + quote(asset))),
        b'},"predictions":[{"model_version":' + orjson.dumps(labels.model_version) + b',"score":',
        numbers(scores),
        b',"result":[',
    ).tolist()
    inside = by_image(_regions(block), boxes.image, count, b",")
    return b",\n".join(head + regions + b"]}]}" for head, regions in zip(heads, inside, strict=True))


def _task_list(labels: PreLabels, image_root: str) -> Iterator[bytes]:
    most = float(labels.work_seconds.max(initial=0.0))  # the whole report's, not a block's
    yield b"[\n"
    for block in labels.blocks():
        scores = task_scores(block.labels.work_seconds, most)
        yield (b",\n" if block.first_image else b"") + _tasks(block, scores, image_root)
    yield b"\n]\n"


def label_studio_files(labels: PreLabels, out: PurePath, image_root: str) -> Files:
    config = config_path(out)
    labels.convertible("fractions", "Label Studio")  # a refusal before anything is written
    yield out, _task_list(labels, image_root)
    yield config, labeling_config(labels.boxes.class_names, labels.shape).encode()


def _needs(labels: PreLabels, image_root: str) -> str:
    where = f"`{image_root}` + the asset id" if image_root else "the bare asset ids (no --image-root given)"
    return f"Label Studio needs the images served at data.image ({where}) and the labeling config (.xml)"


LABEL_STUDIO: Final = ExportTarget(
    LABEL_STUDIO_FORMAT.name,
    label_studio_files,
    "Label Studio tasks with one prediction each, and the labeling config (.xml)",
    needs=_needs,
    carries_model_version=True,
    writes_masks=True,
)
