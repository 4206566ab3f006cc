"""Read a folder of text label files (YOLO, YOLO-seg, YOLO OBB, DOTA, Cartucho): files → text →
the format's parser → one table.

An asset is a label file's name without `.txt`, or an image file in the folder; an empty
`.txt` is an image with no boxes. Names files and image lists (`train.txt`) are not labels.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Final

import msgspec
import numpy as np
from msgspec.structs import replace

from handler.boxes import Images, IntArray, LayoutNote
from handler.datasets.assetnames import asset_key
from handler.datasets.builder import build_dataset
from handler.datasets.cartucho import EXPECTED as CARTUCHO_EXPECTED
from handler.datasets.cartucho import is_cartucho_label_file, looks_like_cartucho, parse_cartucho
from handler.datasets.dota import EXPECTED as DOTA_EXPECTED
from handler.datasets.dota import dota_label_lines, is_dota_label_file, looks_like_dota, parse_dota
from handler.datasets.folder import SIZES_FILE, AssetIndex, FileRows, Folder, RowCollector, read_sizes
from handler.datasets.format import Format, ImagesFolder
from handler.datasets.labels import ClassSpace, TextLabels, parse_lines
from handler.datasets.layouts import Layout, LayoutCheck, check_layout, layout_line
from handler.datasets.loaded import Loaded
from handler.datasets.names import WHERE_NAMES, names_files_near, names_rank, parse_names
from handler.datasets.read_options import NO_OPTIONS, ClassNames, ReadOptions, option_flag
from handler.datasets.region_masks import drawn_polygons, sizes_known
from handler.datasets.yolo import EXPECTED as YOLO_EXPECTED
from handler.datasets.yolo import is_yolo_label_file, looks_like_yolo, parse_yolo
from handler.datasets.yolo_obb import EXPECTED as YOLO_OBB_EXPECTED
from handler.datasets.yolo_obb import is_yolo_obb_label_file, looks_like_yolo_obb, parse_yolo_obb
from handler.datasets.yolo_seg import EXPECTED as YOLO_SEG_EXPECTED
from handler.datasets.yolo_seg import is_yolo_seg_label_file, looks_like_yolo_seg, parse_yolo_seg
from handler.errors import DatasetError
from handler.storage import Source

LABEL_SUFFIX = ".txt"
# Where a YOLO-seg folder's image sizes come from: its polygons are drawn in pixels.
YOLO_SEG_SIZES: Final = (
    f"for a YOLO-seg folder: a {SIZES_FILE} {{image name: [width, height]}} in it, or a ground truth "
    "that gives its images' sizes"
)
# The layout check samples lines from the first files (its own cap on lines bounds its cost).
LAYOUT_SAMPLE_FILES: Final = 200


class TextSyntax(msgspec.Struct, frozen=True):
    """What differs between the text label formats."""

    name: str
    parse: Callable[[str], TextLabels]
    is_label_file: Callable[[str], bool]
    looks_like: Callable[[str], bool]
    normalized: bool
    ids_only: bool
    expected: str  # a label line, in words, for messages
    layout: Layout | None  # the columns `parse` reads (its score optional); None: corners, not a layout
    # The text with its header lines blanked (DOTA's `imagesource:`), every line keeping its number.
    label_lines: Callable[[str], str] = str


YOLO = TextSyntax(
    "yolo",
    parse_yolo,
    is_yolo_label_file,
    looks_like_yolo,
    normalized=True,
    ids_only=True,
    expected=YOLO_EXPECTED,
    layout=Layout("cx cy w h", "last", normalized=True),
)
CARTUCHO = TextSyntax(
    "cartucho",
    parse_cartucho,
    is_cartucho_label_file,
    looks_like_cartucho,
    normalized=False,
    ids_only=False,
    expected=CARTUCHO_EXPECTED,
    layout=Layout("x1 y1 x2 y2", "first", normalized=False),
)
YOLO_OBB = TextSyntax(
    "yolo-obb",
    parse_yolo_obb,
    is_yolo_obb_label_file,
    looks_like_yolo_obb,
    normalized=True,
    ids_only=True,
    expected=YOLO_OBB_EXPECTED,
    layout=None,
)
YOLO_SEG = TextSyntax(
    "yolo-seg",
    parse_yolo_seg,
    is_yolo_seg_label_file,
    looks_like_yolo_seg,
    normalized=True,
    ids_only=True,
    expected=YOLO_SEG_EXPECTED,
    layout=None,
)
DOTA = TextSyntax(
    "dota",
    parse_dota,
    is_dota_label_file,
    looks_like_dota,
    normalized=False,
    ids_only=False,
    expected=DOTA_EXPECTED,
    layout=None,
    label_lines=dota_label_lines,
)


TEXT_SYNTAXES: Final = (YOLO, YOLO_SEG, YOLO_OBB, DOTA, CARTUCHO)


def _candidates(folder: Folder) -> list[Source]:
    candidates = [f for f in folder.with_suffix(LABEL_SUFFIX) if names_rank(f.basename) is None]
    folder.prefetch(candidates)
    return candidates


def label_files(folder: Folder, syntax: TextSyntax) -> list[Source]:
    return [f for f in _candidates(folder) if syntax.is_label_file(folder.text(f))]


def accepts(syntax: TextSyntax, folder: Folder) -> bool:
    """The first label file with a line decides; a folder of empty .txt files only is any format's."""
    texts = [folder.text(f) for f in _candidates(folder)]
    written = [t for t in texts if t.strip()]
    first = next((t for t in written if syntax.is_label_file(t)), None)
    return syntax.looks_like(first) if first is not None else bool(texts) and not written


def unread_label_line(folder: Folder) -> str | None:
    """Why a folder of label files is no text format's, naming the first line that fits none
    (None when its first label file has no line, or it holds no label files)."""
    for file in _candidates(folder):
        text = folder.text(file)
        syntax = next((syntax for syntax in TEXT_SYNTAXES if syntax.is_label_file(text)), None)
        if syntax is None:
            continue
        for number, line in enumerate(syntax.label_lines(text).splitlines(), start=1):
            if line.split():
                expected = "; ".join(
                    f"{s.name} {s.expected.removeprefix('expected ')}" for s in TEXT_SYNTAXES
                )
                return f"{file.name}: line {number}: `{line.strip()}` fits no label line: expected {expected}"
    return None


def _class_space(
    folder: Folder, syntax: TextSyntax, reference: Loaded | None, given: ClassNames | None
) -> ClassSpace:
    if given is not None:  # --gt-names / --pred-names: over any names file in the folder
        return ClassSpace(given.by_id, given.source, syntax.ids_only)
    file = folder.find(names_rank)
    if file is not None:
        return ClassSpace(parse_names(file.name, folder.text(file)), folder.relative(file), syntax.ids_only)
    # Predictions of a model trained on the YOLO GT's data.yaml use its ids.
    if reference is not None and reference.dataset.format == syntax.name and reference.class_order:
        names = dict(enumerate(reference.class_order))
        return ClassSpace(names, f"the ground truth's names ({reference.dataset.source})", syntax.ids_only)
    nearby = _names_nearby(folder, "PRED_NAMES" if reference is not None else "GT_NAMES")
    if reference is not None:  # say why the GT's names were not used, so the fix is found there
        gt = reference.dataset
        why = f"the ground truth {gt.source} was read as {gt.format} and declares no {syntax.name} names"
        return ClassSpace(None, f"{WHERE_NAMES} of the predictions ({why}){nearby}", syntax.ids_only)
    return ClassSpace(None, f"{WHERE_NAMES}{nearby}", syntax.ids_only)


def _names_nearby(folder: Folder, key: str) -> str:
    """`; …/obj.names is one folder up: pass --gt-names …` when a names file is just above the
    folder (a CVAT YOLO export keeps it beside `obj_train_data/`), else nothing."""
    near = names_files_near(folder.name, levels=1)
    where = "one folder up" if folder.source.is_dir() else "beside it"
    return f"; {near[0]} is {where}: pass {option_flag(key)} {near[0]} ({key})" if near else ""


def _class_ids(file: Source, labels: TextLabels, classes: ClassSpace) -> IntArray:
    ids = np.empty(len(labels), dtype=np.int64)
    for row, (token, line) in enumerate(zip(labels.class_token, labels.line, strict=True)):
        index = classes.index(token)
        if index is None:
            raise DatasetError(f"{file.name}: line {line}: {classes.missing(token)}")
        ids[row] = index
    return ids


def _stem(basename: str) -> str:
    return basename[: -len(LABEL_SUFFIX)]


def _with_layout(syntax: TextSyntax, layout: Layout, check: LayoutCheck) -> TextSyntax:
    """The syntax reading lines in a layout the user gave (its frame, else the one detected)."""
    normalized = check.read.layout.normalized if layout.normalized is None else layout.normalized
    return replace(
        syntax,
        parse=partial(parse_lines, parse_line=partial(layout_line, layout)),
        normalized=bool(normalized),
        expected=f"expected `{layout.name()}`",
        layout=replace(layout, normalized=normalized),
    )


def _layout_note(check: LayoutCheck) -> LayoutNote | None:
    if not check.suspect:
        return None
    return LayoutNote(
        read=check.read.layout.name(frame=True),
        read_share=check.read.share,
        lines=check.lines,
        fitting=tuple((f.layout.name(frame=True), f.share) for f in check.fitting),
    )


def read_text_folder(
    syntax: TextSyntax, _: str, folder: Folder, reference: Loaded | None, options: ReadOptions = NO_OPTIONS
) -> Loaded:
    classes = _class_space(folder, syntax, reference, options.names)
    assets = AssetIndex(folder.name)
    assets.add_images(folder)
    collector = RowCollector()
    files = label_files(folder, syntax)
    if not files and not assets.asset_ids:
        raise DatasetError(f"{folder.name}: no {syntax.name} label files: {syntax.expected} in .txt files")
    check = _checked_layout(folder, files, syntax, options.layout)
    if options.layout is not None and check is not None:
        syntax = _with_layout(syntax, options.layout, check)
    for file in files:
        relative = folder.relative(file)
        image = assets.add(_stem(file.basename), relative, "label")
        labels = syntax.parse(folder.text(file))
        rows = FileRows(
            xyxy=labels.xyxy,
            class_id=_class_ids(file, labels, classes),
            confidence=labels.confidence,
            has_confidence=labels.has_confidence,
            difficult=labels.difficult,
            number=labels.line,
            corners=labels.corners,
            polygon_points=labels.polygon_points,
            polygon_xy=labels.polygon_xy,
        )
        collector.add(rows, image, labels.rejected, f"{relative} line ")
    widths, heights = read_sizes(folder, assets.asset_ids)
    unlabelled = _unlabelled(assets.asset_ids, reference)
    unknown = np.full(len(unlabelled), np.nan)  # sizes: the GT's, when paired
    images = Images(
        assets.asset_ids + unlabelled, np.concatenate((widths, unknown)), np.concatenate((heights, unknown))
    )
    box = "x1 y1 x2 y2" if syntax.layout is None else syntax.layout.box
    # Corners become a rectangle's position and size: a bad one is named in those terms.
    sized = syntax.layout is None or box != "x1 y1 x2 y2"
    parsed = collector.rows(syntax.normalized, sized=sized, convention=box)
    polygons = collector.polygons()
    if polygons is not None:
        images = sizes_known(folder.name, images, reference, parsed.image[polygons[1] > 0], YOLO_SEG_SIZES)
        parsed = drawn_polygons(parsed, *polygons, images)
    dataset = build_dataset(folder.name, syntax.name, parsed, images, classes.names)
    note = None if check is None else _layout_note(check)
    dataset = replace(dataset, layout_note=note, unlabelled_images=len(unlabelled))
    return Loaded(dataset, class_order=classes.declared_order)


def _unlabelled(asset_ids: list[str], reference: Loaded | None) -> list[str]:
    """The GT's images these files do not name: the format's tool writes no label file for an
    image it found nothing in (`yolo predict save_txt`), so each is an image without boxes."""
    if reference is None:
        return []
    named = set(map(asset_key, asset_ids))
    return [asset for asset in reference.dataset.asset_ids if asset_key(asset) not in named]


def _checked_layout(
    folder: Folder, files: list[Source], syntax: TextSyntax, given: Layout | None
) -> LayoutCheck | None:
    """How the first files' lines fit the layout read; None for corners, which have no layout."""
    if syntax.layout is None:
        if given is not None:
            raise DatasetError(
                f"{folder.name}: a column layout names an axis-aligned box's columns; "
                f"{syntax.name} lines are corners: {syntax.expected}"
            )
        return None
    texts = [folder.text(file) for file in files[:LAYOUT_SAMPLE_FILES]]
    return check_layout(given or syntax.layout, texts)


def _text_format(syntax: TextSyntax, images: ImagesFolder, sizes_from: str = "") -> Format:
    read = partial(read_text_folder, syntax)
    return Format(
        syntax.name,
        "folder",
        partial(accepts, syntax),
        read,
        names_from=WHERE_NAMES,
        sizes_from=sizes_from,
        read_with=read,
        takes=frozenset(("names", "layout")),
        images=images,
    )


YOLO_FORMAT = _text_format(
    YOLO,
    ImagesFolder("images", "labels"),
    f"for a YOLO folder: a {SIZES_FILE} {{image name: [width, height]}} in it",
)
YOLO_SEG_FORMAT = _text_format(YOLO_SEG, ImagesFolder("images", "labels"), YOLO_SEG_SIZES)
YOLO_OBB_FORMAT = _text_format(
    YOLO_OBB,
    ImagesFolder("images", "labels"),
    f"for a YOLO OBB folder: a {SIZES_FILE} {{image name: [width, height]}} in it",
)
DOTA_FORMAT = _text_format(DOTA, ImagesFolder("images", "labelTxt"))
# Cartucho's mAP tool reads input/ground-truth/ and shows input/images-optional/.
CARTUCHO_FORMAT = _text_format(CARTUCHO, ImagesFolder("images-optional", "ground-truth"))
