"""COCO: one instances file with `images` (ids 1.. in the report's order, `file_name` the asset
id, width and height), `categories` (ids 1.. in class order) and `annotations` whose `score` is
the confidence. A report keeps asset ids, not a COCO file's image and category ids, so the file
carries its own: it is a results list and the ids it refers to in one document (COCO tools and
our reader take an instances file with scores as predictions)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import PurePath
from typing import Final

import numpy as np
import orjson

from handler.boxes import FloatArray
from handler.datasets.coco import COCO as COCO_FORMAT
from handler.report.exports.columns_text import numbers, rows
from handler.report.exports.pre_labels import Block, ExportTarget, Files, PreLabels


def _sizes(values: FloatArray) -> list[int | float | None]:
    """Sizes as JSON: whole numbers as integers, NaN (unknown) as null."""
    return [None if math.isnan(v) else int(v) if v.is_integer() else v for v in values.tolist()]


def _annotations(block: Block) -> bytes:
    """Some images' annotations, joined by commas; ids, image ids counted from the block's first."""
    boxes = block.labels.boxes
    pixels = block.labels.pixels("COCO")
    first = block.first_box + 1
    annotations = rows(
        len(boxes),
        b'{"id":',
        numbers(np.arange(first, first + len(boxes))),
        b',"image_id":',
        numbers(boxes.image + block.first_image + 1),
        b',"category_id":',
        numbers(boxes.class_id + 1),
        b',"bbox":[',
        *(piece for i in range(4) for piece in ((b"," if i else b""), numbers(pixels[:, i]))),
        b'],"area":',
        numbers(pixels[:, 2] * pixels[:, 3]),
        b',"segmentation":[],"iscrowd":0,"score":',
        numbers(boxes.confidence),
        b"}",
    )
    return b",".join(annotations.tolist())


def _document(labels: PreLabels) -> Iterator[bytes]:
    boxes = labels.boxes
    images = [
        {"id": i + 1, "file_name": asset, "width": width, "height": height}
        for i, (asset, width, height) in enumerate(
            zip(boxes.asset_ids, _sizes(boxes.widths), _sizes(boxes.heights), strict=True)
        )
    ]
    categories = [{"id": i + 1, "name": name} for i, name in enumerate(boxes.class_names)]
    yield orjson.dumps({"images": images, "categories": categories})[:-1] + b',"annotations":['
    written = False
    for block in labels.blocks():
        if len(block.labels.boxes):  # a block of images without pre-labels adds no comma
            yield (b"," if written else b"") + _annotations(block)
            written = True
    yield b"]}"


def coco_files(labels: PreLabels, out: PurePath, image_root: str) -> Files:
    labels.convertible("pixels", "COCO")  # a refusal before anything is written
    labels.upright("COCO")
    yield out, _document(labels)


COCO: Final = ExportTarget(
    COCO_FORMAT.name, coco_files, "a COCO instances file with a score on each annotation"
)
