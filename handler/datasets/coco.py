"""COCO: an instances file (GT, or predictions with `score`), or a results list paired with GT.

Assets are named by `file_name` (by `id` when an image has none); classes by category name.
COCO ids are kept as `DatasetIds` so that a results list can be joined to its GT file.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from functools import partial
from itertools import chain
from operator import attrgetter
from typing import Any, Final

import msgspec
import numpy as np
import numpy.typing as npt
import orjson
from msgspec.structs import replace

from handler.boxes import (
    WROTE_BOX,
    WROTE_MASK,
    BoolArray,
    Dataset,
    FloatArray,
    Images,
    IntArray,
    MaskRuns,
    ParsedRows,
    TableMasks,
    WrittenMasks,
    concatenate_masks,
    concatenate_table_masks,
)
from handler.datasets import jsondoc
from handler.datasets.builder import UNKNOWN_CLASS, UNKNOWN_IMAGE, build_dataset
from handler.datasets.cocojson import decode_entries, is_typed
from handler.datasets.columns import finite_rows, float_column, number_or_nan
from handler.datasets.format import Format
from handler.datasets.ids import (
    BY_PLACE,
    JOIN_SHARE_MIN,
    JOINED_SHARE_MIN,
    PLACES_COVER_MIN,
    DatasetIds,
    other_joins,
)
from handler.datasets.jsondoc import (
    ArrayText,
    LoadedArray,
    StreamedArray,
    gc_paused,
    has_keys,
    loaded_array,
    loads,
    row_chunks,
    streamed_array,
)
from handler.datasets.loaded import Loaded
from handler.datasets.read_options import NO_OPTIONS, ReadOptions
from handler.datasets.segmentation import RowMasks, SegmentationText, readable, segmentation_masks
from handler.engine.masks import extent, made
from handler.errors import DatasetError, quoted
from handler.forked import threaded_map
from handler.kernels.json_records import HAS_SCORE, HAS_SEGMENTATION, Records, joined_spans, members, records
from handler.storage import Source

# The keys of a results list's first element: an array that starts so is one (a box's result or
# a mask's, which may write no box).
RESULT_KEYS: Final = ("image_id", ("bbox", "segmentation"))
# A JSON object after optional whitespace (and a UTF-8 byte order mark): what an instances file is,
# with these keys somewhere in it (a native document is not scanned for them).
_OBJECT_START: Final = re.compile(rb"(?:\xef\xbb\xbf)?[ \t\r\n]*\{")
_INSTANCES_KEYS: Final = (b'"images"', b'"annotations"', b'"categories"')


def is_coco_instances(document: Any) -> bool:
    return isinstance(document, dict) and "images" in document and "annotations" in document


def is_coco_results(document: Any) -> bool:
    first = document.first if isinstance(document, ArrayText) else None
    if isinstance(document, list) and document:
        first = document[0]
    return isinstance(first, dict) and has_keys(first, RESULT_KEYS)


def _decode_instances(source: Source, content: bytes, workers: int) -> dict[str, Any] | None:
    """An instances file whose `annotations` are left as text (a `LoadedArray`), read in pieces
    by its reader as a results list is; `images` and `categories` parsed. None for any other
    document (a results list is never scanned) or one that is not valid JSON: the plain parser
    then reads it, and says what is wrong."""
    if not _OBJECT_START.match(content) or not all(key in content for key in _INSTANCES_KEYS):
        return None
    found = members(content)
    if found is None:
        return None
    try:
        values = {loads(content[key]): value for key, value in found}  # the last of a key, as JSON's
        images, categories = (loads(content[values[key]]) for key in ("images", "categories"))
    except (KeyError, orjson.JSONDecodeError):
        return None
    annotations = values.get("annotations")
    if annotations is None or content[annotations.start : annotations.start + 1] != b"[":
        return None
    if not all(isinstance(v, list) and all(isinstance(e, dict) for e in v) for v in (images, categories)):
        return None
    text = LoadedArray(source, {}, annotations.start + 1, annotations.stop - 1, workers, content)
    return {"images": images, "annotations": text, "categories": categories}


def _loaded_results(source: Source, content: bytes, workers: int) -> LoadedArray | None:
    """A results list, decoded a piece at a time by its reader (on `workers` processes)."""
    return loaded_array(source, content, RESULT_KEYS, workers)


def _streamed_results(source: Source, workers: int) -> StreamedArray | None:
    """A big results list, read by its reader a piece at a time from the file, never whole."""
    return streamed_array(source, RESULT_KEYS, jsondoc.PARALLEL_MIN_BYTES, workers)


def _list_field(source: str, document: dict[str, Any], key: str) -> list[Any]:
    value = document.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise DatasetError(f"{source}: `{key}`: expected a list of objects")
    return value


def _four_numbers(value: Any) -> list[float]:
    if isinstance(value, list) and len(value) == 4:
        return [number_or_nan(v) for v in value]
    return [math.nan] * 4


def _xywh(bboxes: list[Any], typed: bool) -> FloatArray:
    """(N, 4) `[x, y, w, h]`; NaN in a row that is not a list of 4 numbers."""
    n = len(bboxes)
    if typed and set(map(len, bboxes)) <= {4}:  # a typed bbox is a list of floats
        return np.fromiter(chain.from_iterable(bboxes), dtype=np.float64, count=4 * n).reshape(n, 4)
    if not typed and set(map(type, bboxes)) <= {list} and set(map(len, bboxes)) <= {4}:
        flat = list(chain.from_iterable(bboxes))
        if set(map(type, flat)) <= {int, float}:
            return np.array(flat, dtype=np.float64).reshape(n, 4)
    return np.array([_four_numbers(b) for b in bboxes], dtype=np.float64).reshape(n, 4)


def _field(entries: list[Any], typed: bool, name: str, default: Any = None) -> list[Any]:
    """One field of every entry: attributes of typed entries, `.get` of plain objects."""
    if typed:
        return list(map(attrgetter(name), entries))
    return [entry.get(name, default) for entry in entries]


def _crowd(flags: list[Any]) -> BoolArray:
    if flags.count(0) == len(flags):
        return np.zeros(len(flags), dtype=bool)
    return np.array([flag == 1 for flag in flags], dtype=bool)


class _Written(msgspec.Struct, frozen=True):
    """One chunk's values as written: ids (an integer column when the decoder checked them),
    boxes as `[x, y, w, h]` (NaN where not 4 numbers), scores (NaN where none)."""

    image_ids: list[Any] | IntArray
    category_ids: list[Any] | IntArray
    xywh: FloatArray
    confidence: FloatArray
    has_confidence: BoolArray
    crowd: BoolArray
    # As written: the text of each row's (`null` where none), or values (`msgspec.Raw` of typed
    # entries, None where none); None when no row names one.
    segmentation: SegmentationText | list[Any] | None


def _record_values(text: bytes, read: Records) -> _Written:
    """The columns the records kernel read from `text`."""
    segmentation = None
    named = (read.written & HAS_SEGMENTATION) != 0
    if named.any():  # their text alone (the piece's is let go), `null` where a row wrote none
        joined, placed = joined_spans(text, np.where(named[:, None], read.segmentation, -1))
        segmentation = SegmentationText(joined, placed[:, 0], placed[:, 1])
    return _Written(
        read.image_id,
        read.category_id,
        read.xywh,
        read.score,
        (read.written & HAS_SCORE) != 0,
        read.iscrowd == 1,
        segmentation,
    )


def _values(entries: list[Any]) -> _Written:
    """The values of `LooseEntry`s or plain JSON objects, each checked."""
    typed = is_typed(entries)
    scores = _field(entries, typed, "score", math.nan)
    if typed:  # a typed score is a number, NaN only where the entry has none
        confidence = np.fromiter(scores, np.float64, len(scores))
        has_confidence = ~np.isnan(confidence)
    else:
        confidence = float_column(scores)
        has_confidence = np.array(["score" in entry for entry in entries], dtype=bool)
    return _Written(
        _field(entries, typed, "image_id"),
        _field(entries, typed, "category_id"),
        _xywh(_field(entries, typed, "bbox"), typed),
        confidence,
        has_confidence,
        _crowd(_field(entries, typed, "iscrowd", 0)),
        _field(entries, typed, "segmentation"),
    )


def _quoted_at(values: list[Any] | IntArray, row: int) -> str:
    """A row's value quoted as the file wrote it (an int, not a numpy scalar, from an id column)."""
    return quoted(values[row].item() if isinstance(values, np.ndarray) else values[row])


class _Chunk(msgspec.Struct, frozen=True):
    """The rows of one chunk of entries."""

    xyxy: FloatArray
    class_id: IntArray
    image: IntArray
    confidence: FloatArray
    has_confidence: BoolArray
    crowd: BoolArray
    rejected: dict[int, str]  # by row of the chunk
    reasons: dict[int, str]  # rows rejected for an unknown image or class
    written_class: IntArray  # category_id as written: -2 - i for text `written_names[i]`, -1 for neither
    written_names: tuple[str, ...]
    masks: TableMasks | None  # None: no row wrote a `segmentation`
    wrote: IntArray | None  # `ParsedRows.wrote`: a mask where a row wrote one and no box (None: boxes)


# The masks of rows that name no `segmentation`.
_NO_MASKS: Final = RowMasks(None, {})


def _chunk_rows(written: _Written, ids: DatasetIds, sizes: _Sizes) -> _Chunk:
    """The rows of values as written (numbered from 0) against known images (of `sizes`) and
    categories."""
    image = ids.image_index.lookup(written.image_ids)
    class_id = ids.class_index.lookup(written.category_ids)
    xywh = written.xywh
    xyxy = np.concatenate([xywh[:, :2], xywh[:, :2] + xywh[:, 2:]], axis=1)
    boxless = np.isnan(xyxy).all(axis=1)
    masks = (
        _NO_MASKS
        if written.segmentation is None
        else segmentation_masks(written.segmentation, image, sizes.widths, sizes.heights, boxless)
    )
    wrote = None
    if masks.masks is not None:  # a mask's result that wrote no box has its mask's extent
        drawn = np.flatnonzero(boxless & masks.masks.present)
        if len(drawn):  # every row (a mask results list's): the masks as they are, not a copy
            shapes = masks.masks if len(drawn) == len(xyxy) else masks.masks[drawn]
            xyxy[drawn] = extent(made(readable(shapes)))
            wrote = np.full(len(xyxy), WROTE_BOX, dtype=np.int64)
            wrote[drawn] = WROTE_MASK
    # What no rule can read: an image or class the file does not have (a bad box is the builder's).
    image_ids, category_ids = written.image_ids, written.category_ids
    problems: list[tuple[BoolArray, Callable[[int], str]]] = [
        (image < 0, lambda row: f"image_id {_quoted_at(image_ids, row)} is not in the images"),
        (class_id < 0, lambda row: f"category_id {_quoted_at(category_ids, row)} is not in the categories"),
    ]
    rejected: dict[int, str] = {}
    for rows, problem in problems:
        for row in np.flatnonzero(rows).tolist():
            rejected.setdefault(row, problem(row))
    # A mask that cannot be read leaves a written box without one (then the side is scored on
    # boxes, and says so); a row with neither is skipped with the mask's reason.
    boxed = finite_rows(xyxy)
    for row, why in masks.rejected.items():
        if not boxed[row]:
            rejected.setdefault(row, why)
    reasons = {row: UNKNOWN_IMAGE for row in np.flatnonzero(image < 0).tolist()} | {
        row: UNKNOWN_CLASS for row in np.flatnonzero((class_id < 0) & (image >= 0)).tolist()
    }
    confidence, has_confidence = written.confidence, written.has_confidence
    return _Chunk(
        xyxy,
        class_id,
        image,
        confidence,
        has_confidence,
        written.crowd,
        rejected,
        reasons,
        *_written_classes(category_ids),
        masks.masks,
        wrote,
    )


def _ints(values: list[Any] | IntArray) -> IntArray:
    """An id column as integers, -1 where a value is not one (an id column is its own)."""
    if isinstance(values, np.ndarray):
        return values
    return np.array(
        [
            v if isinstance(v, int) and not isinstance(v, bool) and -(2**63) <= v < 2**63 else -1
            for v in values
        ],
        dtype=np.int64,
    )


class _Sizes(msgspec.Struct, frozen=True):
    """The images' widths and heights, NaN where unknown: what a polygon is drawn on."""

    widths: FloatArray
    heights: FloatArray


def _written_classes(values: list[Any] | IntArray) -> tuple[IntArray, tuple[str, ...]]:
    """The category ids as written: integers as they are, a text as -2 - its place among the
    texts (a trainer's own label strings, read again by name), -1 for anything else."""
    written = _ints(values)
    if isinstance(values, np.ndarray):
        return written, ()
    texts = sorted({v for v in values if isinstance(v, str)})
    if not texts:
        return written, ()
    place = {text: -2 - i for i, text in enumerate(texts)}
    coded = np.array([place.get(v, -1) if isinstance(v, str) else -1 for v in values], dtype=np.int64)
    return np.where(coded < -1, coded, written), tuple(texts)


def _rows(chunks: Iterable[list[Any]], ids: DatasetIds, sizes: _Sizes, count: int) -> ParsedRows:
    """The rows of COCO annotations or results given in about `count` chunks, in order."""
    filling = _Filling(count)
    with gc_paused():
        for entries in chunks:
            filling.add(_chunk_rows(_values(entries), ids, sizes))
    return filling.rows()


# The columns of `_Chunk` that hold a value per row: their type and the shape of one row's value.
_COLUMNS: Final = {
    "xyxy": (np.float64, (4,)),
    "class_id": (np.int64, ()),
    "image": (np.int64, ()),
    "confidence": (np.float64, ()),
    "has_confidence": (np.bool_, ()),
    "crowd": (np.bool_, ()),
    # int32 until a chunk writes a class id beyond it (then int64): it is only read again by the
    # search of other readings, and a results list's ids are small.
    "written_class": (np.int32, ()),
    "wrote": (np.int64, ()),
}
# Room for the rows of the chunks expected, guessed from the first: a little more than that.
_ROOM: Final = 1.1


def _empty_columns(rows: int) -> dict[str, Any]:
    """Columns for `rows` rows of zeros, whose memory is taken only as they are filled (`wrote`
    only where a row wrote a mask and no box: zero is `WROTE_BOX`)."""
    return {name: np.zeros((rows, *shape), dtype) for name, (dtype, shape) in _COLUMNS.items()}


def _holding(
    column: npt.NDArray[np.signedinteger[Any]], values: IntArray
) -> npt.NDArray[np.signedinteger[Any]]:
    """The column, made int64 when `values` do not all fit its narrower type."""
    limits = np.iinfo(column.dtype)
    if not len(values) or (limits.min <= values.min() and values.max() <= limits.max):
        return column
    return column.astype(np.int64)


def _unless_implied(has_confidence: BoolArray, confidence: FloatArray) -> BoolArray | None:
    """None when every row wrote a score that is a number (`ParsedRows` reads None as the rows
    whose confidence is a number): a flag column the size of the list not held through the run.
    Told by a sum, with no temporary column: a NaN or an infinity makes it not finite."""
    return None if has_confidence.all() and math.isfinite(confidence.sum()) else has_confidence


class _Filling:
    """The columns of a list's rows, filled chunk by chunk in order, so that the whole list's
    columns exist once (not once in the chunks and again joined).

    The first of about `count` chunks of similar size sets the room (left untouched, unused
    room takes no memory); past it a column grows in place by a quarter (realloc: a big array
    is moved by mremap, not copied), and the room left over is given back at the end."""

    def __init__(self, count: int) -> None:
        self._count = count
        self._rows = 0
        self._columns: dict[str, Any] = {}
        self._rejected: dict[int, str] = {}
        self._reasons: dict[int, str] = {}
        self._masks: list[tuple[int, TableMasks | None]] = []  # each chunk's rows and masks
        self._names: dict[str, int] = {}  # the texts written as category_id, by place
        self._wrote = False  # whether a row wrote a mask and no box

    def add(self, chunk: _Chunk) -> None:
        first, rows = self._rows, len(chunk.image)
        if not self._columns:
            self._columns = _empty_columns(int(rows * self._count * _ROOM) + 1024)
        room = len(self._columns["image"])
        if first + rows > room:
            self._resize(max(first + rows, room + room // 4))
        self._columns["written_class"] = _holding(self._columns["written_class"], chunk.written_class)
        for name, column in self._columns.items():
            values = getattr(chunk, name)
            if values is not None:
                column[first : first + rows] = values
        self._wrote |= chunk.wrote is not None
        if chunk.written_names:
            self._name_classes(self._columns["written_class"][first : first + rows], chunk.written_names)
        self._rejected.update((first + row, why) for row, why in chunk.rejected.items())
        self._reasons.update((first + row, why) for row, why in chunk.reasons.items())
        self._masks.append((rows, chunk.masks))
        self._rows += rows

    def _name_classes(self, written: IntArray, names: tuple[str, ...]) -> None:
        """A chunk's texts (`written` in place) renumbered among the list's: its codes are its own."""
        codes = np.array([-2 - self._names.setdefault(name, len(self._names)) for name in names])
        text = written < -1
        written[text] = codes[-2 - written[text]]

    def _resize(self, rows: int) -> None:
        for column in self._columns.values():
            column.resize((rows, *column.shape[1:]), refcheck=False)  # only this object holds it

    def _joined_masks(self) -> TableMasks | None:
        """The chunks' masks one after the other (None: no chunk has any; a chunk without is made
        rows without a mask only then). Text and values (a piece the typed decoding could not
        read is plain values) are joined as values, the text parsed."""
        if all(masks is None for _, masks in self._masks):
            return None
        parts = [MaskRuns.none(rows) if masks is None else masks for rows, masks in self._masks]
        if all(isinstance(p, WrittenMasks) or not p.present.any() for p in parts):
            return concatenate_table_masks(parts)
        return concatenate_masks([readable(p) for p in parts])

    def rows(self) -> ParsedRows:
        self._columns = self._columns or _empty_columns(0)
        self._resize(self._rows)
        return ParsedRows(
            xyxy=self._columns["xyxy"],
            class_id=self._columns["class_id"],
            image=self._columns["image"],
            source_index=np.arange(self._rows),
            position=lambda row: f"annotations[{row}]",
            confidence=self._columns["confidence"],
            has_confidence=_unless_implied(self._columns["has_confidence"], self._columns["confidence"]),
            crowd=self._columns["crowd"] if self._columns["crowd"].any() else None,
            rejected=self._rejected,
            reasons=self._reasons,
            sized=True,
            convention="x y w h",
            written_class=self._columns["written_class"],
            written_names=tuple(self._names),
            masks=self._joined_masks(),
            wrote=self._columns["wrote"] if self._wrote else None,
        )


def _piece_rows(
    document: ArrayText, ids: DatasetIds, sizes: _Sizes, nominal: tuple[int, int]
) -> _Chunk | None:
    """One piece's rows (numbered from 0), cut from its own text and read by the records kernel,
    or, where it refuses them (text ids, odd values), decoded loosely; None when the piece is not
    a list of objects (a wrong cut, a file that changed or cannot be read, or an odd file: the
    plain reading then says what is wrong)."""
    try:
        text = document.piece_text(nominal)
    except OSError:
        return None
    if text is None:
        return None
    read = records(text)
    if isinstance(read, Records):
        return _chunk_rows(_record_values(text, read), ids, sizes)
    with gc_paused():
        entries = decode_entries(text)
        if not entries or not (is_typed(entries) or all(isinstance(e, dict) for e in entries)):
            return None
        rows = _chunk_rows(_values(entries), ids, sizes)
        # Freed while collections are paused: its tuples would make the next allocation's collection
        # walk them all, once per piece.
        del entries
    return rows


def _pieces_rows(document: ArrayText, ids: DatasetIds, sizes: _Sizes) -> ParsedRows | None:
    """The rows of a results list (or an instances file's annotations) read piece by piece, side
    by side on as many threads as the run may use local processes; None when a piece fails."""
    pieces = document.nominal_pieces()
    work = partial(_piece_rows, document, ids, sizes)
    filling = _Filling(len(pieces))
    with closing(threaded_map(work, pieces, document.workers)) as parts:
        for part in parts:
            if part is None:
                return None
            filling.add(part)
    return filling.rows() if document.unchanged() else None


def _images_and_categories(
    source: str, document: dict[str, Any]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    images = _list_field(source, document, "images")
    categories = _list_field(source, document, "categories")
    for position, image in enumerate(images):
        if "id" not in image:
            raise DatasetError(f"{source}: images[{position}]: expected an `id`")
    for position, category in enumerate(categories):
        if "id" not in category or not isinstance(category.get("name"), str):
            raise DatasetError(f"{source}: categories[{position}]: expected an `id` and a `name`")
    return images, categories


def read_coco_instances(
    source: str, document: dict[str, Any], format_name: str
) -> tuple[Dataset, DatasetIds]:
    images, categories = _images_and_categories(source, document)
    ids = DatasetIds([str(i["id"]) for i in images], [str(c["id"]) for c in categories])
    assets = Images(
        [str(i.get("file_name") or i["id"]) for i in images],
        _sizes(images, "width"),
        _sizes(images, "height"),
    )
    sizes = _Sizes(assets.widths, assets.heights)
    rows = _annotations_rows(source, document, ids, sizes)
    dataset = build_dataset(source, format_name, rows, assets, [c["name"] for c in categories])
    return replace(dataset, own_ids=ids), ids


def _annotations_rows(source: str, document: dict[str, Any], ids: DatasetIds, sizes: _Sizes) -> ParsedRows:
    """The rows of the annotations, read in pieces when left as text (else, or when a piece
    fails, from the whole file's plain values: its parser says what is wrong)."""
    annotations = document.get("annotations", [])
    if isinstance(annotations, LoadedArray):
        rows = _pieces_rows(annotations, ids, sizes)
        if rows is not None:
            return rows
        document = jsondoc.parse_json(annotations.source, annotations.content)
    annotations = _list_field(source, document, "annotations")
    return _rows(row_chunks(annotations), ids, sizes, len(annotations) // jsondoc.CHUNK_ROWS + 1)


def _sizes(images: list[dict[str, Any]], key: str) -> Any:
    sizes = float_column([i.get(key) for i in images])
    sizes[~(sizes > 0)] = np.nan  # 0 means unknown in some exports
    return sizes


def _result_chunks(source: str, document: list[Any]) -> Iterator[list[Any]]:
    for entries in row_chunks(document):
        if not is_typed(entries) and not all(isinstance(e, dict) for e in entries):
            raise DatasetError(
                f"{source}: expected a list of objects with image_id, category_id, bbox, score"
            )
        yield entries


def read_coco_results(
    source: str,
    document: list[Any] | ArrayText,
    format_name: str,
    reference: Dataset | None,
    ids: DatasetIds | None,
    names: dict[int, str] | None = None,
) -> Dataset:
    """A results list covers every image of the COCO GT file it is paired with (contract §4).

    `names` (--pred-names) name its category ids instead of the GT file's categories. An
    `ArrayText` is decoded and turned into columns a piece at a time (side by side when it pays)."""
    if reference is None:
        raise DatasetError(
            f"{source}: a COCO results list (predictions with scores) read as the ground truth: swapped? "
            "The ground truth, a COCO instances file, comes first: prelabel-eval GT PRED"
        )
    if ids is None:
        raise DatasetError(
            f"{source}: a COCO results list names images and categories by COCO id: expected a COCO "
            f"instances file as the ground truth, not {reference.source} ({reference.format})"
        )
    images = Images(reference.asset_ids, reference.widths, reference.heights)
    class_names = reference.class_names
    if names is not None:
        ids, class_names = DatasetIds(ids.image_ids, [str(i) for i in names]), list(names.values())
    sizes = _Sizes(reference.widths, reference.heights)
    rows = _results_rows(source, document, ids, sizes)
    joined = None
    if _joined_share(rows) < JOIN_SHARE_MIN:  # its ids name other images: another key may join them
        for way, other in other_joins(ids, reference.asset_ids):
            again = _results_rows(source, document, other, sizes)
            if _joined_share(again) >= JOINED_SHARE_MIN and _covers(way, again, len(reference.asset_ids)):
                rows, joined = again, way
                break
    return replace(build_dataset(source, format_name, rows, images, class_names), id_join=joined)


def _results_rows(source: str, document: list[Any] | ArrayText, ids: DatasetIds, sizes: _Sizes) -> ParsedRows:
    """The pieces' rows of an `ArrayText`; the plain values' of a list or of a text whose
    pieces fail (a cut inside a string, an odd value: the plain parser then says what is wrong)."""
    if isinstance(document, ArrayText):
        rows = _pieces_rows(document, ids, sizes)
        if rows is not None:
            return rows
        document = document.loaded().whole()
    return _rows(_result_chunks(source, document), ids, sizes, len(document) // jsondoc.CHUNK_ROWS + 1)


def _covers(way: str, rows: ParsedRows, images: int) -> bool:
    """A join by place must name nearly every image; a join by name, any of them."""
    if not way.startswith(BY_PLACE):
        return True
    named = np.unique(rows.image[rows.image >= 0])
    return len(named) >= PLACES_COVER_MIN * images


def _joined_share(rows: ParsedRows) -> float:
    """The share of the rows whose image id names an image."""
    unknown = sum(1 for why in rows.reasons.values() if why == UNKNOWN_IMAGE)
    return 1.0 - unknown / len(rows) if len(rows) else 1.0


def _read_instances(source: str, document: Any, _: Loaded | None) -> Loaded:
    dataset, ids = read_coco_instances(source, document, "coco")
    return Loaded(dataset, ids, class_order=dataset.class_names)


def _read_results(
    source: str, document: Any, reference: Loaded | None, options: ReadOptions = NO_OPTIONS
) -> Loaded:
    given = options.names
    dataset = read_coco_results(
        source,
        document,
        "coco-results",
        reference.dataset if reference else None,
        reference.ids if reference else None,
        None if given is None else given.category_ids or given.by_id,
    )
    return Loaded(dataset)


COCO = Format(
    "coco",
    "json",
    is_coco_instances,
    _read_instances,
    names_from="the COCO file's `categories` with names",
    decode=_decode_instances,
)
COCO_RESULTS = Format(
    "coco-results",
    "json",
    is_coco_results,
    _read_results,
    names_from="the COCO GT file whose `categories` name the ids",
    decode=_loaded_results,
    stream=_streamed_results,
    read_with=_read_results,
    takes=frozenset(("names",)),
)
