"""YOLO OBB: one `<image stem>.txt` per image in the folder `--out`
(`class x1 y1 x2 y2 x3 y3 x4 y4 confidence`: the box's four corners turned, in 0-1 image
fractions, as Ultralytics writes oriented boxes), and `classes.txt` naming the class ids. An
axis-aligned box is its four corners, unturned; a quadrilateral of an image of unknown size its
own corners, as it was read."""

from __future__ import annotations

from pathlib import PurePath
from typing import Final

import numpy as np

from handler.datasets.textfolder import YOLO_OBB_FORMAT
from handler.report.exports.pre_labels import FRACTION_DECIMALS, ExportTarget, Files, PreLabels
from handler.report.exports.yolo_txt import label_folder, label_texts


def _texts(labels: PreLabels) -> list[bytes]:
    """Some images' label files' texts, image by image."""
    points = np.round(
        labels.corners("fractions", "YOLO OBB", quadrilaterals=True).reshape(-1, 8), FRACTION_DECIMALS
    )
    return label_texts(labels, points.T)


def yolo_obb_files(labels: PreLabels, out: PurePath, image_root: str) -> Files:
    labels.convertible("fractions", "YOLO OBB")  # a refusal before anything is written
    yield from label_folder(labels, out, _texts)


YOLO_OBB: Final = ExportTarget(
    YOLO_OBB_FORMAT.name,
    yolo_obb_files,
    "a folder of YOLO OBB .txt files (four corners, with confidences) and classes.txt",
)
