"""CVAT for images 1.1: one XML file (`annotations.xml`), on its own, in its export folder or in
the zip CVAT exports.

datumaro's CVAT plugin (datumaro/plugins/data_formats/cvat) is the spec: an `<annotations>`
root, `<meta>` with the task's (or project's) `<labels>`, then an `<image id name width height>`
per image holding its shapes. A `<box label xtl ytl xbr ybr occluded>` is a box in pixels; a
numeric `<attribute name="score">` is its confidence. An occluded box is a box (an object the
labeler draws), kept as CVAT's own COCO export keeps it. A box's `rotation` is degrees
clockwise about its centre, its corners those of the box before turning (a rotated box). A
`<polygon points="x1,y1;x2,y2;…">` (pixels) is drawn as pycocotools draws a COCO polygon, and a
`<mask rle left top width height>` is its runs of 0s and 1s over that crop of the image, row by
row, 0s first (`region_masks`): each is one object scored by its mask, its box the mask's extent.
Shapes of one label sharing a `group_id` (0: none), one at least a polygon or a mask and the rest
boxes, are one object, as datumaro's COCO export merges a group (and as its COCO import writes a
COCO object: its bbox as a box, each part of its segmentation as a polygon): its mask the union of
the group's polygons and masks. A shape whose `is_crowd` attribute is true (as datumaro writes
COCO's `iscrowd`) is a crowd region, left out as COCO's are.
Polylines, points, ellipses, cuboids and skeletons are skipped, each counted with its own reason;
image tags are not objects. The asset is the image's file name (`name` without its folders).

XML is parsed by the standard library's expat after `xmlsafe`'s guard (no document type
declaration, so no entity), streaming image by image.
"""

from __future__ import annotations

import io
import math
import xml.etree.ElementTree as ET
import zipfile
import zlib
from collections import defaultdict
from collections.abc import Iterator
from typing import Final

import msgspec
import numpy as np
from msgspec import field

from handler.boxes import FloatArray, Images, IntArray, ParsedRows
from handler.datasets.builder import build_dataset
from handler.datasets.folder import AssetIndex, Folder
from handler.datasets.format import Format
from handler.datasets.labels import ClassSpace, number
from handler.datasets.loaded import Loaded
from handler.datasets.region_masks import MaskDecodeError, RegionMasks, cvat_mask, image_size, polygon_points
from handler.datasets.xmlsafe import XML_ERRORS, has_root, refuse_doctype, xml_refusal
from handler.errors import DatasetError, quoted
from handler.storage import Source

ANNOTATIONS_FILE: Final = "annotations.xml"
ROOT: Final = "annotations"
BOX: Final = "box"
SCORE: Final = "score"
GROUP: Final = "group_id"
CROWD: Final = "is_crowd"
POLYGON: Final = "polygon"
MASK: Final = "mask"
# Shapes that are objects but neither boxes nor masks: skipped, each with its own reason.
OTHER_SHAPES: Final = ("polyline", "points", "ellipse", "cuboid", "skeleton")
# A mask's crop, as its attributes name it.
CROP: Final = ("left", "top", "width", "height")
CORNERS: Final = ("xtl", "ytl", "xbr", "ybr")
# The most an archive member may hold once inflated: a zip that inflates further is refused.
MAX_INFLATED_BYTES: Final = 2 << 30
_ZIP_MAGIC: Final = b"PK\x03\x04"
# CVAT writes its file at the export's top: one folder down at most (a zip's own folder); one
# deeper in a folder is another dataset's stray copy.
EXPORT_DEPTH: Final = 1
# What reading a member of a damaged zip raises: a bad CRC (BadZipFile), a broken stream (zlib),
# an unknown compression method, the encrypted flag, a member cut short.
ZIP_READ_ERRORS: Final = (
    zipfile.BadZipFile,
    zlib.error,
    NotImplementedError,
    RuntimeError,
    EOFError,
    OSError,
)


def looks_like_cvat_xml(content: bytes) -> bool:
    return has_root(content, "annotations")


class CvatShapes(msgspec.Struct):
    """The shapes of a CVAT file that are objects, as columns, and its images."""

    names: list[str] = field(default_factory=list)  # image names, in file order
    widths: list[float] = field(default_factory=list)
    heights: list[float] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  # the <meta> labels, declared order
    image: list[int] = field(default_factory=list)  # per shape
    corners: list[list[float]] = field(default_factory=list)
    rotation: list[float] = field(default_factory=list)  # degrees clockwise about the centre
    label: list[str] = field(default_factory=list)
    score: list[float] = field(default_factory=list)  # NaN: no score attribute
    has_score: list[bool] = field(default_factory=list)
    crowd: list[bool] = field(default_factory=list)  # an `is_crowd` attribute that is true
    position: list[str] = field(default_factory=list)
    rejected: dict[int, tuple[str, str]] = field(default_factory=dict)  # row → (why, reason)
    masks: RegionMasks = field(default_factory=RegionMasks)  # of the polygons and masks


def _attributes(shape: ET.Element) -> dict[str, str]:
    return {a.get("name", ""): (a.text or "").strip() for a in shape.iter("attribute")}


def _shape_problem(shape: ET.Element) -> tuple[str, str] | None:
    if shape.tag not in (BOX, POLYGON, MASK):
        return f"a {shape.tag} shape, not a box", f"{shape.tag}, not a box"
    return None


def _polygon(shape: ET.Element) -> FloatArray:
    pairs = [pair.split(",") for pair in shape.get("points", "").split(";")]
    if any(len(pair) != 2 for pair in pairs):
        raise MaskDecodeError("expected `points` as x,y pairs separated by semicolons")
    values = [number(value) for pair in pairs for value in pair]
    return polygon_points([math.nan if v is None else v for v in values], (1.0, 1.0))


def _crop(shape: ET.Element) -> tuple[int, int, int, int]:
    values = [number(shape.get(key, "")) for key in CROP]
    if any(v is None or not math.isfinite(v) or not v.is_integer() for v in values):
        raise MaskDecodeError(f"expected whole numbers in {', '.join(CROP)}")
    left, top, width, height = (int(v) for v in values if v is not None)
    return left, top, width, height


def _add_mask(shapes: CvatShapes, row: int, shape: ET.Element, size: tuple[float, float]) -> None:
    """The polygon's or the mask's pixels, or why they cannot be read."""
    width, height = size
    try:
        wide, high = image_size(width, height)  # the <image>'s
        if shape.tag == POLYGON:
            shapes.masks.add_polygon(row, _polygon(shape))
        else:
            shapes.masks.add_pixels(row, cvat_mask(shape.get("rle", ""), _crop(shape), high, wide))
    except MaskDecodeError as error:
        shapes.rejected[row] = f"a <{shape.tag}>: {error}", "unreadable mask"


def _add_shape(
    shapes: CvatShapes, image: int, shape: ET.Element, position: str, size: tuple[float, float]
) -> None:
    row = len(shapes.label)
    shapes.image.append(image)
    shapes.position.append(position)
    shapes.label.append(shape.get("label", "").strip())
    values = [number(shape.get(corner, "")) for corner in CORNERS]
    shapes.corners.append([math.nan if v is None else v for v in values])
    rotation = number(shape.get("rotation", "0") or "0")  # not a number: the builder skips the box
    shapes.rotation.append(math.nan if rotation is None else rotation)
    attributes = _attributes(shape)
    shapes.crowd.append(attributes.get(CROWD, "").lower() in ("true", "1"))
    score = attributes.get(SCORE)
    value = number(score) if score else None  # a score that is not a number: the builder skips the box
    shapes.has_score.append(score is not None)
    shapes.score.append(math.nan if value is None else value)
    problem = _shape_problem(shape)
    if shape.tag in (POLYGON, MASK):
        _add_mask(shapes, row, shape, size)
    elif problem is None and None in values:
        problem = "expected numbers in xtl, ytl, xbr, ybr", "unreadable row"
    if problem is not None:
        shapes.rejected[row] = problem


def _size(image: ET.Element, key: str) -> float:
    value = number(image.get(key, "") or "")
    return value if value is not None and math.isfinite(value) and value > 0 else math.nan


def _image_name(image: ET.Element, position: int) -> str:
    name = (image.get("name") or "").replace("\\", "/").rsplit("/", 1)[-1]
    return name or str(image.get("id", position))


def _events(where: str, content: bytes) -> Iterator[tuple[str, ET.Element]]:
    try:
        yield from ET.iterparse(io.BytesIO(content), events=("start", "end"))
    except XML_ERRORS as error:
        raise xml_refusal(where, error) from None


def parse_cvat(where: str, content: bytes) -> CvatShapes:
    """The boxes and other shapes of a CVAT for images 1.1 file (no file access)."""
    refuse_doctype(where, content)
    if not looks_like_cvat_xml(content):
        raise DatasetError(f"{where}: expected an <{ROOT}> root element (CVAT for images 1.1 XML)")
    shapes = CvatShapes()
    inside: ET.Element | None = None
    for event, element in _events(where, content):
        if event == "start":
            if element.tag == "image":
                inside = element
            elif element.tag == "track":
                raise DatasetError(
                    f"{where}: a <track>: this is CVAT for video; export the task as CVAT for images 1.1"
                )
            continue
        if element.tag == "label" and inside is None and element.findtext("name"):
            shapes.labels.append((element.findtext("name") or "").strip())
        elif element.tag == "image":
            _add_image(shapes, element)
            inside = None
            element.clear()  # the image is read: its subtree is not kept
    return shapes


def _add_image(shapes: CvatShapes, element: ET.Element) -> None:
    index = len(shapes.names)
    name = _image_name(element, index)
    shapes.names.append(name)
    shapes.widths.append(_size(element, "width"))
    shapes.heights.append(_size(element, "height"))
    objects = [shape for shape in element if shape.tag in (BOX, POLYGON, MASK) or shape.tag in OTHER_SHAPES]
    size = shapes.widths[-1], shapes.heights[-1]
    parts = _one_object_groups(objects)
    for number_, shape in enumerate(objects, start=1):
        group = parts.get(shape.get(GROUP, ""))
        if group is not None and shape is not group[0]:
            continue  # a part of the group's object, drawn into its first part's row
        where = f"image {quoted(name)} shape #{number_} <{shape.tag}>"
        if group is not None:
            where += f" (group_id {shape.get(GROUP)}: {len(group)} parts)"
        _add_shape(shapes, index, shape, where, size)
        for part in (group or [])[1:]:
            _add_mask(shapes, len(shapes.label) - 1, part, size)


def _one_object_groups(shapes: list[ET.Element]) -> dict[str, list[ET.Element]]:
    """The image's groups that are one object, by `group_id`: their polygons and masks, the
    group's boxes left out (they are the object's box)."""
    groups: dict[str, list[ET.Element]] = defaultdict(list)
    for shape in shapes:
        if shape.get(GROUP, "0") not in ("", "0"):
            groups[shape.get(GROUP, "")].append(shape)
    return {
        group: [shape for shape in members if shape.tag in (POLYGON, MASK)]
        for group, members in groups.items()
        if len(members) > 1
        and len({shape.get("label") for shape in members}) == 1
        and {shape.tag for shape in members} <= {BOX, POLYGON, MASK}
        and any(shape.tag in (POLYGON, MASK) for shape in members)
    }


def _zip_member(where: str, content: bytes) -> bytes:
    """The annotations.xml of a CVAT export zip (the shallowest one)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(content))
    except zipfile.BadZipFile as error:
        raise DatasetError(f"{where}: expected a zip file ({error})") from None
    with archive:
        members = [m for m in archive.infolist() if m.filename.rsplit("/", 1)[-1] == ANNOTATIONS_FILE]
        if not members:
            raise DatasetError(
                f"{where}: no {ANNOTATIONS_FILE} in the zip: expected a CVAT for images 1.1 export"
            )
        member = min(members, key=lambda m: m.filename.count("/"))
        try:
            with archive.open(member) as stream:
                inflated = stream.read(MAX_INFLATED_BYTES + 1)
        except ZIP_READ_ERRORS as error:  # a bad CRC, compression, encryption, a member cut short
            raise DatasetError(f"{where}: {member.filename} cannot be read from the zip ({error})") from None
    if len(inflated) > MAX_INFLATED_BYTES:
        raise DatasetError(
            f"{where}: {member.filename} inflates beyond {MAX_INFLATED_BYTES >> 30} GiB: refused"
        )
    return inflated


def _annotation_file(folder: Folder) -> Source | None:
    """The folder's CVAT file: annotations.xml, else its one .xml or .zip (datumaro names the
    file after the subset: default.xml)."""
    named = folder.find(lambda name: 0 if name == ANNOTATIONS_FILE else None, depth=EXPORT_DEPTH)
    if named is not None:
        return named
    candidates = [
        f
        for f in folder.files
        if f.basename.lower().endswith((".xml", ".zip")) and folder.level(f) <= EXPORT_DEPTH
    ]
    return candidates[0] if len(candidates) == 1 else None


def _xml_of(folder: Folder, file: Source) -> bytes:
    content = folder.content(file)
    return _zip_member(file.name, content) if _is_zip(file, content) else content


def _is_zip(file: Source, content: bytes) -> bool:
    """A zip archive by its magic or its name (a damaged one may have lost the magic)."""
    return content.startswith(_ZIP_MAGIC) or file.basename.lower().endswith(".zip")


def looks_like_cvat(folder: Folder) -> bool:
    file = _annotation_file(folder)
    if file is None:
        return False
    content = folder.content(file)
    if _is_zip(file, content):
        try:
            with zipfile.ZipFile(io.BytesIO(content)) as archive:
                return any(name.rsplit("/", 1)[-1] == ANNOTATIONS_FILE for name in archive.namelist())
        except zipfile.BadZipFile:
            return True  # a damaged archive is still the one file named: the read says what is wrong
    return looks_like_cvat_xml(content)


def _rows(shapes: CvatShapes, class_id: IntArray) -> ParsedRows:
    positions = shapes.position
    n = len(shapes.label)
    image = np.array(shapes.image, dtype=np.int64)
    heights, widths = (np.nan_to_num(np.array(sizes))[image] for sizes in (shapes.heights, shapes.widths))
    masks = shapes.masks.runs(n, heights, widths)
    return ParsedRows(
        xyxy=shapes.masks.boxes(masks, np.array(shapes.corners, dtype=np.float64).reshape(n, 4)),
        class_id=class_id,
        image=np.array(shapes.image, dtype=np.int64),
        source_index=np.arange(n),
        position=lambda row: positions[row],
        confidence=np.array(shapes.score, dtype=np.float64),
        has_confidence=np.array(shapes.has_score, dtype=bool),
        rejected={row: why for row, (why, _) in shapes.rejected.items()},
        reasons={row: reason for row, (_, reason) in shapes.rejected.items()},
        angle=np.array(shapes.rotation, dtype=np.float64) if any(shapes.rotation) else None,
        crowd=np.array(shapes.crowd, dtype=bool) if any(shapes.crowd) else None,
        masks=masks,
        wrote=shapes.masks.wrote(n),
    )


def read_cvat(_: str, folder: Folder, __: Loaded | None = None) -> Loaded:
    file = _annotation_file(folder)
    if file is None:
        raise DatasetError(f"{folder.name}: expected a CVAT for images 1.1 {ANNOTATIONS_FILE} (or its zip)")
    shapes = parse_cvat(file.name, _xml_of(folder, file))
    assets = AssetIndex(file.name)
    for position, name in enumerate(shapes.names):
        assets.add(name, f"<image> #{position + 1}", "image")  # an image listed twice is an error
    classes = ClassSpace(None, "", ids_only=False)
    for label in shapes.labels:
        classes.index(label)
    class_id = np.array([classes.index(label) if label else -1 for label in shapes.label], dtype=np.int64)
    images = Images(assets.asset_ids, np.array(shapes.widths), np.array(shapes.heights))
    return Loaded(build_dataset(file.name, "cvat", _rows(shapes, class_id), images, classes.names))


CVAT = Format("cvat", "folder", looks_like_cvat, read_cvat)
