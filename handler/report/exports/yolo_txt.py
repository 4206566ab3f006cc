"""YOLO: one `<image stem>.txt` per image in the folder `--out` (`class cx cy w h confidence`, in
0-1 image fractions; an image with no pre-label gets an empty file, as YOLO marks a background
image), and `classes.txt` naming the class ids, one a line (what YOLO tools and our reader read)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import PurePath
from typing import Final

import numpy as np

from handler.boxes import FloatArray
from handler.datasets.textfolder import YOLO_FORMAT
from handler.errors import DatasetError, quoted
from handler.report.exports.columns_text import by_image, numbers, rows
from handler.report.exports.pre_labels import FRACTION_DECIMALS, ExportTarget, Files, PreLabels

CLASSES_FILE: Final = "classes.txt"
NAME_BYTES: Final = 255  # the longest file name Linux, macOS and Windows all take


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


def label_names(asset_ids: Sequence[str], report_id: str) -> list[str]:
    """Each image's label file name, `<image stem>.txt` as YOLO names it; a DatasetError, before any
    file, for a name no file can have or one two images (or `classes.txt`) would share."""
    names = [f"{PurePath(asset).stem}.txt" for asset in asset_ids]
    taken: dict[str, str | None] = {CLASSES_FILE: None}
    for asset, name in zip(asset_ids, names, strict=True):
        if name.startswith(".") or "\0" in name or len(name.encode("utf-8", "replace")) > NAME_BYTES:
            raise DatasetError(
                f"report {report_id}: image {quoted(asset)} gives no usable YOLO label file name"
            )
        if name in taken:
            other = "the class list" if taken[name] is None else f"image {quoted(str(taken[name]))}"
            raise DatasetError(
                f"report {report_id}: image {quoted(asset)} and {other} would both be written to {name} "
                "(YOLO names a label file by the image's name alone): export with --to coco, which keeps "
                "the names whole"
            )
        taken[name] = asset
    return names


def label_folder(labels: PreLabels, out: PurePath, texts: Callable[[PreLabels], list[bytes]]) -> Files:
    """One label file per image (`texts` of a block, image by image), then `classes.txt`; the
    names are checked before the first."""
    names = label_names(labels.boxes.asset_ids, labels.report_id)
    for block in labels.blocks():
        for offset, text in enumerate(texts(block.labels)):
            yield out / names[block.first_image + offset], text
    yield out / CLASSES_FILE, "".join(f"{name}\n" for name in labels.boxes.class_names).encode()


def yolo_files(labels: PreLabels, out: PurePath, image_root: str) -> Files:
    labels.convertible("fractions", "YOLO")  # a refusal before anything is written
    labels.upright("YOLO")
    yield from label_folder(labels, out, _texts)


YOLO: Final = ExportTarget(
    YOLO_FORMAT.name, yolo_files, "a folder of YOLO .txt files (with confidences) and classes.txt"
)
