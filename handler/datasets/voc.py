"""Pascal VOC: a folder of XML files, one `<annotation>` per image, with `<filename>`, `<size>`
and `<object>`s (`<name>`, `<bndbox>` xmin/ymin/xmax/ymax in pixels, `<difficult>`).

Coordinates are read as written (no 1-based shift), as CVAT and the VOC → COCO/YOLO
converters do, so the same labels exported as VOC, COCO or YOLO give the same boxes.
Difficult objects are kept and flagged.
"""

from __future__ import annotations

import math
import os
import re
import xml.etree.ElementTree as ET

import msgspec
import numpy as np

from handler.boxes import BoolArray, FloatArray, Images, IntArray
from handler.datasets.builder import build_dataset
from handler.datasets.folder import AssetIndex, FileRows, Folder, RowCollector
from handler.datasets.format import Format, ImagesFolder
from handler.datasets.labels import ClassSpace, number
from handler.datasets.loaded import Loaded
from handler.datasets.xmlsafe import XML_ERRORS, refuse_doctype, xml_refusal
from handler.errors import DatasetError

XML_SUFFIX = ".xml"
ROOT = "annotation"
# An <annotation...> element near the top says VOC (a wrong root is then named by the reader), but
# not CVAT's <annotations>: a CVAT file left in another dataset's folder is not a VOC file.
_LOOKS_VOC = re.compile(rb"<annotation(?!s[\s>/])")
CORNERS = ("xmin", "ymin", "xmax", "ymax")


class VocImage(msgspec.Struct, frozen=True):
    """One XML file's content; `object_number` is each box's 1-based place among the `<object>`s."""

    filename: str | None
    width: float
    height: float
    names: list[str]
    xyxy: FloatArray
    difficult: BoolArray
    object_number: IntArray
    rejected: list[tuple[int, str]]


def _root(where: str, content: bytes) -> ET.Element:
    refuse_doctype(where, content)
    try:
        root = ET.fromstring(content)
    except XML_ERRORS as error:
        raise xml_refusal(where, error) from None
    if root.tag != ROOT:
        raise DatasetError(f"{where}: expected an <{ROOT}> root element (Pascal VOC), found <{root.tag}>")
    return root


def _size(root: ET.Element, tag: str) -> float:
    value = number((root.findtext(f"size/{tag}") or "").strip())
    return value if value is not None and math.isfinite(value) and value > 0 else math.nan


def _object(element: ET.Element) -> tuple[str, list[float], bool] | str:
    """An `<object>`'s name, corners and difficult flag, or why it is not a box."""
    name = (element.findtext("name") or "").strip()
    if not name:
        return "expected a <name>"
    corners = [number((element.findtext(f"bndbox/{tag}") or "").strip()) for tag in CORNERS]
    values = [v for v in corners if v is not None]
    if len(values) != len(CORNERS):
        return "expected a <bndbox> with numbers in <xmin>, <ymin>, <xmax>, <ymax>"
    return name, values, (element.findtext("difficult") or "0").strip() in ("1", "true")


def parse_voc(where: str, content: bytes) -> VocImage:
    """The XML of one image (a DatasetError naming line and column when it is not well formed)."""
    root = _root(where, content)
    parsed = [(n, _object(e)) for n, e in enumerate(root.findall("object"), start=1)]
    rejected = [(n, p) for n, p in parsed if isinstance(p, str)]
    objects = [(n, p) for n, p in parsed if not isinstance(p, str)]
    xyxy = np.array([p[1] for _, p in objects], dtype=np.float64).reshape(len(objects), 4)
    return VocImage(
        filename=(root.findtext("filename") or "").strip() or None,
        width=_size(root, "width"),
        height=_size(root, "height"),
        names=[p[0] for _, p in objects],
        xyxy=xyxy,
        difficult=np.array([p[2] for _, p in objects], dtype=bool),
        object_number=np.array([n for n, _ in objects], dtype=np.int64),
        rejected=rejected,
    )


def looks_like_voc(folder: Folder) -> bool:
    files = folder.with_suffix(XML_SUFFIX)
    return bool(files) and _LOOKS_VOC.search(folder.content(files[0])[:4096]) is not None


def _asset_id(image: VocImage, xml_basename: str) -> str:
    """`<filename>` without any folder part; the XML's own name when there is none."""
    if image.filename:
        return image.filename.replace("\\", "/").rsplit("/", 1)[-1]
    return os.path.splitext(xml_basename)[0]


def read_voc_folder(_: str, folder: Folder, __: Loaded | None = None) -> Loaded:
    files = folder.with_suffix(XML_SUFFIX)
    if not files:
        raise DatasetError(f"{folder.name}: no .xml files: expected Pascal VOC <{ROOT}> files, one per image")
    folder.prefetch(files)
    assets = AssetIndex(folder.name)
    classes = ClassSpace(None, "", ids_only=False)
    collector = RowCollector()
    widths, heights = [], []
    for file in files:
        relative = folder.relative(file)
        image = parse_voc(file.name, folder.content(file))
        index = assets.add(_asset_id(image, file.basename), relative, "label")
        widths.append(image.width)
        heights.append(image.height)
        rows = FileRows(
            xyxy=image.xyxy,
            class_id=np.array([classes.index(name) for name in image.names], dtype=np.int64),
            confidence=np.full(len(image.names), np.nan),  # VOC carries no confidence
            has_confidence=np.zeros(len(image.names), dtype=bool),
            difficult=image.difficult,
            number=image.object_number,
        )
        collector.add(rows, index, image.rejected, f"{relative} object #")
    images = Images(assets.asset_ids, np.array(widths, dtype=np.float64), np.array(heights, dtype=np.float64))
    return Loaded(build_dataset(folder.name, "voc", collector.rows(normalized=False), images, classes.names))


VOC = Format(
    "voc", "folder", looks_like_voc, read_voc_folder, images=ImagesFolder("JPEGImages", "Annotations")
)
