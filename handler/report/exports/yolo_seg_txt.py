"""YOLO-seg: one `<image stem>.txt` per image in the folder `--out` (`class x1 y1 … xn yn
confidence`: each mask's polygon (`mask_outlines`: its parts and holes joined by bridges of no
width, as Ultralytics joins a COCO object's parts) in 0-1 image fractions, as Ultralytics writes
segmentation labels with `save_conf`), and `classes.txt` naming the class ids. A report scored on
boxes has no masks to write (`--to yolo` writes its boxes)."""

from __future__ import annotations

from pathlib import PurePath
from typing import Final

from handler.datasets.textfolder import YOLO_SEG_FORMAT
from handler.report.exports.columns_text import by_image, numbers, rows
from handler.report.exports.pre_labels import ExportTarget, Files, PointText, PreLabels
from handler.report.exports.yolo_txt import label_folder

TARGET: Final = "YOLO-seg"


def _texts(labels: PreLabels) -> list[bytes]:
    """Some images' label files' texts, image by image."""
    boxes = labels.boxes
    polygons = labels.polygon_texts("fractions", PointText(b" ", b" "), b"")
    lines = rows(len(boxes), numbers(boxes.class_id), polygons, b" ", numbers(boxes.confidence), b"\n")
    return by_image(lines, boxes.image, len(boxes.asset_ids), b"")


def yolo_seg_files(labels: PreLabels, out: PurePath, image_root: str) -> Files:
    labels.with_masks(TARGET)  # the refusals before anything is written
    yield from label_folder(labels, out, _texts)


YOLO_SEG: Final = ExportTarget(
    YOLO_SEG_FORMAT.name,
    yolo_seg_files,
    "a folder of YOLO-seg .txt files (each mask's polygon, with confidences) and classes.txt",
    writes_masks=True,
)
