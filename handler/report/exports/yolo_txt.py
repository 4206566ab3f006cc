"""YOLO: one `<image stem>.txt` per image in the folder `--out` (`class cx cy w h confidence`, in
0-1 image fractions; an image with no pre-label gets an empty file, as YOLO marks a background
image), and `classes.txt` naming the class ids, one a line (what YOLO tools and our reader read)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import PurePath
from typing import Final

import numpy as np

from handler.boxes import FloatArray
from handler.datasets.textfolder import YOLO_FORMAT
from handler.report.exports.columns_text import by_image, numbers, rows
from handler.report.exports.pre_labels import FRACTION_DECIMALS, ExportTarget, Files, PreLabels

CLASSES_FILE: Final = "classes.txt"


def _texts(labels: PreLabels) -> list[bytes]:
    """Some images' label files' texts, image by image."""
    left, top, width, height = np.round(labels.fractions("YOLO"), FRACTION_DECIMALS).T
    centre_x, centre_y = (
        np.round(left + width / 2, FRACTION_DECIMALS),
        np.round(top + height / 2, FRACTION_DECIMALS),
    )
    return label_texts(labels, (centre_x, centre_y, width, height))


def label_texts(labels: PreLabels, columns: Iterable[FloatArray]) -> list[bytes]:
    """Per image, its label file's text: a line per box, its class id, `columns` and its confidence."""
    boxes = labels.boxes
    lines = rows(
        len(boxes),
        numbers(boxes.class_id),
        *(piece for column in (*columns, boxes.confidence) for piece in (b" ", numbers(column))),
        b"\n",
    )
    return by_image(lines, boxes.image, len(boxes.asset_ids), b"")


def label_folder(labels: PreLabels, out: PurePath, texts: Callable[[PreLabels], list[bytes]]) -> Files:
    """One label file per image (`texts` of a block, image by image), then `classes.txt`."""
    for block in labels.blocks():
        for asset, text in zip(block.labels.boxes.asset_ids, texts(block.labels), strict=True):
            yield out / f"{PurePath(asset).stem}.txt", text
    yield out / CLASSES_FILE, "".join(f"{name}\n" for name in labels.boxes.class_names).encode()


def yolo_files(labels: PreLabels, out: PurePath, image_root: str) -> Files:
    labels.convertible("fractions", "YOLO")  # a refusal before anything is written
    labels.upright("YOLO")
    yield from label_folder(labels, out, _texts)


YOLO: Final = ExportTarget(
    YOLO_FORMAT.name, yolo_files, "a folder of YOLO .txt files (with confidences) and classes.txt"
)
