"""COCO: one instances file with `images` (`file_name` the asset id, width and height),
`categories` and `annotations` whose `score` is the confidence: a results list and the ids it
refers to in one document (COCO tools and our reader take an instances file with scores as
predictions). A run scored on masks writes each pre-label's mask as `segmentation`, compressed
RLE as pycocotools writes it (`{"size": [h, w], "counts": "…"}`), its `area` the mask's pixels.
The ids are the GT file's own when the report knows them (a COCO GT: every image's and every
class's id, each a whole number, none twice), so the file joins the user's COCO data; else they
are numbered from 1 in the report's order, and the note line says which."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import PurePath
from typing import Final

import msgspec
import numpy as np
import orjson

from handler.boxes import FloatArray, IntArray
from handler.datasets.coco import COCO as COCO_FORMAT
from handler.engine.pre_label_boxes import Candidates
from handler.report.exports.columns_text import Piece, numbers, rows
from handler.report.exports.mask_encodings import coco_strings, mask_areas
from handler.report.exports.pre_labels import Block, ExportTarget, Files, PreLabels

_ID: Final = re.compile(r"-?[0-9]{1,18}")


def _sizes(values: FloatArray) -> list[int | float | None]:
    """Sizes as JSON: whole numbers as integers, NaN (unknown) as null."""
    return [None if math.isnan(v) else int(v) if v.is_integer() else v for v in values.tolist()]


class CocoIds(msgspec.Struct, frozen=True):
    """Each image's and each class's COCO id, and whether they are the GT file's own."""

    images: IntArray
    classes: IntArray
    own: bool

    @classmethod
    def of(cls, boxes: Candidates) -> CocoIds:
        own = boxes.own_ids
        if own is not None:
            images = _whole_numbers(own.image_ids)
            known = [text for text in own.class_ids if text]  # a class only the predictions have: ""
            classes = _whole_numbers(known)
            if images is not None and classes is not None:
                return cls(images, _with_new_ids(own.class_ids, classes), True)
        return cls(np.arange(1, len(boxes.asset_ids) + 1), np.arange(1, len(boxes.class_names) + 1), False)


def _whole_numbers(ids: list[str]) -> IntArray | None:
    """The ids as integers, if each is one and none repeats (COCO's ids are)."""
    if not all(_ID.fullmatch(text) for text in ids) or len(set(ids)) < len(ids):
        return None
    return np.array([int(text) for text in ids], dtype=np.int64)


def _with_new_ids(texts: list[str], known: IntArray) -> IntArray:
    """The known ids in place, each class without one ("") numbered on after the largest."""
    ids = np.zeros(len(texts), dtype=np.int64)
    has_id = np.array([bool(text) for text in texts], dtype=bool)
    ids[has_id] = known
    ids[~has_id] = int(known.max(initial=0)) + 1 + np.arange(int((~has_id).sum()))
    return ids


def _segmentations(labels: PreLabels, pixels: FloatArray) -> tuple[tuple[Piece, ...], Piece]:
    """The annotations' `segmentation` and `area`: each mask's compressed RLE and its pixels where
    the run scored masks (pycocotools' `encode` and `area`), else none and the box's area."""
    masks = labels.boxes.masks
    if masks is None:
        return (b"[]",), numbers(pixels[:, 2] * pixels[:, 3])
    strings = np.empty(len(masks), dtype=object)
    strings[:] = [text.replace(b"\\", b"\\\\") for text in coco_strings(masks)]  # JSON escapes `\`
    rle = (b'{"size":[', numbers(masks.height), b",", numbers(masks.width), b'],"counts":"', strings, b'"}')
    return rle, numbers(mask_areas(masks))


def _annotations(block: Block, ids: CocoIds) -> bytes:
    """Some images' annotations, joined by commas; annotation ids counted from the block's first."""
    boxes = block.labels.boxes
    pixels = block.labels.pixels("COCO")
    segmentation, area = _segmentations(block.labels, pixels)
    first = block.first_box + 1
    annotations = rows(
        len(boxes),
        b'{"id":',
        numbers(np.arange(first, first + len(boxes))),
        b',"image_id":',
        numbers(ids.images[boxes.image + block.first_image]),
        b',"category_id":',
        numbers(ids.classes[boxes.class_id]),
        b',"bbox":[',
        *(piece for i in range(4) for piece in ((b"," if i else b""), numbers(pixels[:, i]))),
        b'],"area":',
        area,
        b',"segmentation":',
        *segmentation,
        b',"iscrowd":0,"score":',
        numbers(boxes.confidence),
        b"}",
    )
    return b",".join(annotations.tolist())


def _document(labels: PreLabels, ids: CocoIds) -> Iterator[bytes]:
    boxes = labels.boxes
    images = [
        {"id": image, "file_name": asset, "width": width, "height": height}
        for image, asset, width, height in zip(
            ids.images.tolist(), boxes.asset_ids, _sizes(boxes.widths), _sizes(boxes.heights), strict=True
        )
    ]
    categories = [
        {"id": c, "name": name} for c, name in zip(ids.classes.tolist(), boxes.class_names, strict=True)
    ]
    yield orjson.dumps({"images": images, "categories": categories})[:-1] + b',"annotations":['
    written = False
    for block in labels.blocks():
        if len(block.labels.boxes):  # a block of images without pre-labels adds no comma
            yield (b"," if written else b"") + _annotations(block, ids)
            written = True
    yield b"]}"


def coco_files(labels: PreLabels, out: PurePath, image_root: str) -> Files:
    labels.convertible("pixels", "COCO")  # a refusal before anything is written
    labels.upright("COCO")
    yield out, _document(labels, CocoIds.of(labels.boxes))


def _ids_note(labels: PreLabels, image_root: str) -> str:
    if CocoIds.of(labels.boxes).own:
        return "image and category ids are the ground truth's own: the file joins your COCO data by id"
    return (
        "image and category ids are numbered from 1 (the ground truth gave no COCO ids): "
        "join the file to your data by file_name and category name"
    )


COCO: Final = ExportTarget(
    COCO_FORMAT.name,
    coco_files,
    "a COCO instances file with a score on each annotation (masks: compressed RLE)",
    _ids_note,
    writes_masks=True,
)
