"""CVAT for images 1.1: an `annotations.xml` whose `<meta>` declares each class as a label with a
numeric `score` attribute, then an `<image id name width height>` per image of the report
holding its pre-labels as `<box label source="auto" occluded="0" xtl ytl xbr ybr>` (a rotated
box: before turning, with `rotation`, degrees clockwise about its centre) with the
confidence in `<attribute name="score">` (CVAT's own field layout, as datumaro reads it). CVAT
needs each image's size: a report whose images have none cannot be exported to it."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import PurePath
from typing import Final

import numpy as np

from handler.boxes import FloatArray, is_turned
from handler.datasets.cvat import CVAT as CVAT_FORMAT
from handler.errors import DatasetError, quoted
from handler.report.exports.columns_text import Piece, by_image, joined_by_row, numbers, rows, texts
from handler.report.exports.mask_encodings import cvat_crops
from handler.report.exports.pre_labels import PIXEL_DECIMALS, Block, ExportTarget, Files, PointText, PreLabels
from handler.report.exports.xml_text import escape, quoteattr
from handler.report.json_lines import ObjectArray

XML_DECLARATION: Final = '<?xml version="1.0" encoding="utf-8"?>\n'
SCORE_ATTRIBUTE: Final = (
    "<attributes><attribute><name>score</name><mutable>True</mutable><input_type>number</input_type>"
    "<default_value>0</default_value><values>0;1;0.000001</values></attribute></attributes>"
)
# What XML 1.0 cannot carry at all, escaped or not (a NUL, most control characters, lone surrogates,
# U+FFFE and U+FFFF): its Char production's complement, listed rather than negated, which re
# compiles several times faster (the CLI loads this module on every start).
NOT_XML: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


# Each label's type in `<meta>`, by the shape the pre-labels are written as.
LABEL_TYPES: Final = {"box": "rectangle", "mask": "mask", "polygon": "polygon"}


def _meta(class_names: list[str], shape: str) -> str:
    labels = "".join(
        f"<label><name>{escape(name)}</name><type>{LABEL_TYPES[shape]}</type>{SCORE_ATTRIBUTE}</label>"
        for name in class_names
    )
    return f"<meta><task><mode>annotation</mode><labels>{labels}</labels></task></meta>"


def _rotations(angle: FloatArray) -> ObjectArray:
    """Each box's ` rotation="…"`, written for a rotated box only (as CVAT writes it)."""
    attribute = np.full(len(angle), b"", dtype=object)
    turned = is_turned(angle)
    degrees = numbers(np.round(np.remainder(angle[turned], 360.0), PIXEL_DECIMALS))
    attribute[turned] = [b' rotation="' + value + b'"' for value in degrees.tolist()]
    return attribute


def _box_shapes(labels: PreLabels) -> tuple[bytes, tuple[Piece, ...]]:
    """The shapes' tag and their attributes as boxes: corners in pixels, a rotation if turned."""
    left, top, width, height = labels.pixels("CVAT").T
    corners = np.round(np.stack((left, top, left + width, top + height)), PIXEL_DECIMALS)
    return b"box", (
        *(
            piece
            for name, column in zip((b"xtl", b"ytl", b"xbr", b"ybr"), corners, strict=True)
            for piece in (b" " + name + b'="', numbers(column), b'"')
        ),
        _rotations(labels.boxes.angle),
    )


def _mask_shapes(labels: PreLabels) -> tuple[bytes, tuple[Piece, ...]]:
    """The shapes' tag and their attributes as masks: runs over each mask's crop, row by row."""
    crops = cvat_crops(labels.with_masks("CVAT"))
    owner = np.repeat(np.arange(len(crops.left)), np.diff(crops.offsets))
    runs = joined_by_row(numbers(crops.runs), owner, len(crops.left), b", ")
    return b"mask", (
        b' rle="',
        runs,
        *(
            piece
            for name, column in zip(
                (b"left", b"top", b"width", b"height"),
                (crops.left, crops.top, crops.width, crops.height),
                strict=True,
            )
            for piece in (b'" ' + name + b'="', numbers(column))
        ),
        b'"',
    )


def _polygon_shapes(labels: PreLabels) -> tuple[bytes, tuple[Piece, ...]]:
    """The shapes' tag and their attributes as polygons: `x,y;x,y;…` in pixels."""
    points = labels.polygon_texts("pixels", PointText(b"", b","), b";")
    return b"polygon", (b' points="', points, b'"')


SHAPES: Final = {"box": _box_shapes, "mask": _mask_shapes, "polygon": _polygon_shapes}


def _images(block: Block) -> bytes:
    """Some images' `<image>` elements, ids counted from the block's first image."""
    labels = block.labels
    boxes = labels.boxes
    widths, heights = labels.image_sizes("CVAT")
    tag, attributes = SHAPES[labels.shape](labels)
    box_lines = rows(
        len(boxes),
        b"    <" + tag + b" label=",
        texts(boxes.class_names, boxes.class_id, lambda name: quoteattr(name).encode()),
        b' source="auto" occluded="0"',
        *attributes,
        b' z_order="0">\n      <attribute name="score">',
        numbers(boxes.confidence),
        b"</attribute>\n    </" + tag + b">\n",
    )
    count = len(boxes.asset_ids)
    starts = rows(
        count,
        b'  <image id="',
        numbers(np.arange(block.first_image, block.first_image + count)),
        b'" name=',
        texts(boxes.asset_ids, np.arange(count), lambda name: quoteattr(name).encode()),
        b' width="',
        numbers(widths.astype(np.int64)),
        b'" height="',
        numbers(heights.astype(np.int64)),
        b'">\n',
    ).tolist()
    inside = by_image(box_lines, boxes.image, count, b"")
    return b"".join(start + shapes + b"  </image>\n" for start, shapes in zip(starts, inside, strict=True))


def _document(labels: PreLabels) -> Iterator[bytes]:
    meta = _meta(labels.boxes.class_names, labels.shape)
    yield f"{XML_DECLARATION}<annotations>\n  <version>1.1</version>\n  {meta}\n".encode()
    yield from map(_images, labels.blocks())
    yield b"</annotations>\n"


def _check_xml_text(report_id: str, names: Sequence[str], what: str) -> None:
    """A DatasetError naming the first name XML cannot hold (a per-name pass: images, classes)."""
    for name in names:
        found = NOT_XML.search(name)
        if found:
            raise DatasetError(
                f"report {report_id}: {what} {quoted(name)} holds U+{ord(found.group()):04X}, which XML "
                f"cannot carry, and CVAT reads XML: rename it in the datasets, or export --to coco"
            )


def cvat_files(labels: PreLabels, out: PurePath, image_root: str) -> Files:
    labels.image_sizes("CVAT")  # the refusals before anything is written
    _check_xml_text(labels.report_id, labels.boxes.asset_ids, "asset id")
    _check_xml_text(labels.report_id, labels.boxes.class_names, "class name")
    yield out, _document(labels)


def _needs(labels: PreLabels, image_root: str) -> str:
    classes = len(labels.boxes.class_names)
    return (
        f"the CVAT task needs the {classes} labels the XML's <meta> lists, each with a number attribute "
        "`score`, and images named as the asset ids"
    )


CVAT: Final = ExportTarget(
    CVAT_FORMAT.name,
    cvat_files,
    "a CVAT for images 1.1 XML (source=auto, a score attribute)",
    needs=_needs,
    writes_masks=True,
)
