"""A dataset folder: its files (each read at most once), its side files and its assets.

Detection and reading share the reads, and every text is fetched in parallel, because on
S3 each file is a request and a YOLO folder has one per image.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final

import msgspec
import numpy as np
import orjson

from handler.boxes import BoolArray, FloatArray, IntArray, ParsedRows
from handler.datasets.assetnames import IMAGE_EXTENSIONS, asset_key
from handler.errors import DatasetError, quoted
from handler.kernels import ragged
from handler.storage import Source

SIZES_FILE = "sizes.json"
READ_THREADS = 16
# Export side folders that hold no labels: macOS zip resource forks, hidden files.
_IGNORED_PARTS = ("__MACOSX",)
# How many folders below a dataset folder its files are looked for: a YOLO `labels/train/`, an
# export's `task_1/annotations/` are 2 down; a stray file deeper in a big tree is not the dataset.
SEARCH_DEPTH: Final = 4


def _visible(relative: str) -> bool:
    parts = relative.replace("\\", "/").split("/")
    return not any(p.startswith(".") or p in _IGNORED_PARTS for p in parts)


class Folder:
    """The files of a dataset folder (or a single file read as a folder of one)."""

    def __init__(self, source: Source, files: list[Source], contents: dict[str, bytes] | None = None) -> None:
        self.source = source
        self.name = source.name
        self._contents: dict[str, bytes] = dict(contents or {})
        self.files = [f for f in files if _visible(self.relative(f))]

    @classmethod
    def of(cls, source: Source) -> Folder:
        """A dataset folder: its files down to SEARCH_DEPTH folders (what every format's layout
        needs), not the whole tree of whatever folder was named."""
        return cls(source, source.files(SEARCH_DEPTH))

    @classmethod
    def single(cls, source: Source, content: bytes) -> Folder:
        """One label file (a VOC .xml, a YOLO .txt) given on its own."""
        return cls(source, [source], {source.name: content})

    def relative(self, file: Source) -> str:
        """The file's path inside the folder, for messages and duplicate checks."""
        if file.name != self.name and file.name.startswith(self.name):
            return file.name[len(self.name) :].lstrip("/\\")
        return file.basename

    def with_suffix(self, suffix: str) -> list[Source]:
        return [f for f in self.files if f.basename.lower().endswith(suffix)]

    def dataset_file(self, suffixes: tuple[str, ...]) -> Source | None:
        """The folder's one file with a dataset suffix (side files aside), if it has exactly one."""
        files = [f for f in self.files if f.basename.lower().endswith(suffixes) and f.basename != SIZES_FILE]
        return files[0] if len(files) == 1 else None

    def shards(self, suffix: str) -> list[Source]:
        """Every file with this suffix, in name order (the shards of one dataset)."""
        return [f for f in self.files if f.basename.lower().endswith(suffix)]

    def images(self) -> list[Source]:
        return [f for f in self.files if os.path.splitext(f.basename)[1].lower() in IMAGE_EXTENSIONS]

    def level(self, file: Source) -> int:
        """How many folders below the dataset's folder the file is (0: in it)."""
        return self.relative(file).count("/")

    def find(self, matches: Callable[[str], int | None], depth: int = SEARCH_DEPTH) -> Source | None:
        """The shallowest file (`depth` folders down at most) whose basename `matches(basename)`
        gives the lowest rank (not None)."""
        ranked = [
            (level, rank, index, f)
            for index, f in enumerate(self.files)
            if (level := self.level(f)) <= depth and (rank := matches(f.basename)) is not None
        ]
        return min(ranked, key=lambda item: item[:3])[3] if ranked else None

    def content(self, file: Source) -> bytes:
        if file.name not in self._contents:
            self.prefetch([file])
        return self._contents[file.name]

    def text(self, file: Source) -> str:
        content = self.content(file)
        try:
            return content.decode("utf-8-sig")  # tools on Windows write a BOM
        except UnicodeDecodeError as error:
            raise DatasetError(f"{file.name}: byte {error.start}: expected UTF-8 text") from None

    def prefetch(self, files: list[Source]) -> None:
        """Read the files not read yet, in parallel."""
        missing = [f for f in files if f.name not in self._contents]
        if len(missing) <= 1:
            contents = [f.read_bytes() for f in missing]
        else:
            with ThreadPoolExecutor(max_workers=READ_THREADS) as pool:
                contents = list(pool.map(lambda f: f.read_bytes(), missing))
        self._contents.update(zip((f.name for f in missing), contents, strict=True))


class AssetIndex:
    """The assets of a folder dataset, one per image name without extension.

    A label file and an image file of the same name are one asset; two label files (or two
    images, `a.jpg` and `a.png`) of the same name are an error naming both, not a merge.
    """

    def __init__(self, where: str) -> None:
        self.where = where
        self.asset_ids: list[str] = []
        self._index: dict[str, int] = {}
        self._paths: dict[tuple[str, str], str] = {}

    def add(self, asset_id: str, path: str, kind: str) -> int:
        key = asset_key(asset_id)
        first = self._paths.setdefault((key, kind), path)
        if first != path:
            raise DatasetError(
                f"{self.where}: {quoted(first)} and {quoted(path)} name the same image {quoted(key)} "
                "(names without extension): expected one file per image"
            )
        if key not in self._index:
            self._index[key] = len(self.asset_ids)
            self.asset_ids.append(asset_id)
        return self._index[key]

    def add_images(self, folder: Folder) -> None:
        """Images in the folder are present even without labels (Ultralytics' background images,
        and `yolo predict` writes no .txt for an image without detections)."""
        for image in folder.images():
            self.add(image.basename, folder.relative(image), "image")


class FileRows(msgspec.Struct, frozen=True):
    """The boxes one file wrote, `number[k]` naming box k's line (or object) in the file."""

    xyxy: FloatArray
    class_id: IntArray
    confidence: FloatArray  # NaN where the file wrote none or not a number
    has_confidence: BoolArray  # where the file wrote one
    difficult: BoolArray
    number: IntArray
    corners: FloatArray | None = None  # (N, 8) of a format writing corners (ParsedRows.corners)
    polygon_points: IntArray | None = None  # each row's points in `polygon_xy` (TextLabels')
    polygon_xy: FloatArray | None = None  # not one per row: `order` reorders it by the rows'


# FileRows' fields of one value per row.
_ROW_FIELDS: Final = tuple(name for name in FileRows.__struct_fields__ if name != "polygon_xy")


class RowCollector:
    """The rows of a folder's files in file order, each remembering where it was written.

    A file's boxes and the lines (or objects) it could not read are rows in the order of their
    numbers, so that skips are listed as they appear in the file.
    """

    def __init__(self) -> None:
        self._parts: list[FileRows] = []
        self._images: list[IntArray] = []
        self._files: list[IntArray] = []
        self._prefixes: list[str] = []
        self._rejected: dict[int, str] = {}
        self._rows = 0

    def add(self, rows: FileRows, image: int, rejected: list[tuple[int, str]], prefix: str) -> None:
        """One file's rows on `image` and its rejected (number, why); number n is shown as
        `{prefix}{n}`, e.g. `a.txt line 3`."""
        if rejected:
            rows = _with_rejected(rows, [number for number, _ in rejected])
            order = np.argsort(rows.number, kind="stable")
            rows = FileRows(
                **{f: _reordered(getattr(rows, f), order) for f in _ROW_FIELDS},
                polygon_xy=_polygons_reordered(rows, order),
            )
            placed = np.argsort(order)[-len(rejected) :]  # where each rejected row went
            for row, (_, why) in zip(placed.tolist(), rejected, strict=True):
                self._rejected[self._rows + row] = why
        self._parts.append(rows)
        self._images.append(np.full(len(rows.number), image, dtype=np.int64))
        self._files.append(np.full(len(rows.number), len(self._prefixes), dtype=np.int64))
        self._prefixes.append(prefix)
        self._rows += len(rows.number)

    def rows(self, normalized: bool, sized: bool = False, convention: str = "x1 y1 x2 y2") -> ParsedRows:
        def column(name: str, empty: Any) -> Any:
            return np.concatenate([getattr(p, name) for p in self._parts]) if self._parts else empty

        written = any(p.corners is not None for p in self._parts)
        corners = np.concatenate([_corners(p) for p in self._parts]) if written else None

        files = column_of(self._files)
        number = column("number", np.empty(0, dtype=np.int64))
        prefixes = self._prefixes
        return ParsedRows(
            xyxy=column("xyxy", np.empty((0, 4))),
            class_id=column("class_id", np.empty(0, dtype=np.int64)),
            image=column_of(self._images),
            source_index=None,  # numbered by the builder, among the rows that are a box
            position=lambda row: f"{prefixes[files[row]]}{number[row]}",
            confidence=column("confidence", np.empty(0)),
            has_confidence=column("has_confidence", np.empty(0, dtype=bool)),
            normalized=np.full(len(number), normalized),
            difficult=column("difficult", np.empty(0, dtype=bool)),
            rejected=self._rejected,
            sized=sized,
            convention=convention,
            corners=corners,
        )

    def polygons(self) -> tuple[FloatArray, IntArray] | None:
        """The rows' polygons (`FileRows.polygon_xy`, `polygon_points`) in row order; None: none."""
        if not any(p.polygon_points is not None for p in self._parts):
            return None
        points = [_polygon_points(p) for p in self._parts]
        xy = [np.zeros((0, 2)) if p.polygon_xy is None else p.polygon_xy for p in self._parts]
        return np.concatenate(xy), np.concatenate(points)


def _polygon_points(rows: FileRows) -> IntArray:
    return np.zeros(len(rows.number), dtype=np.int64) if rows.polygon_points is None else rows.polygon_points


def _reordered(values: Any, order: IntArray) -> Any:
    return None if values is None else values[order]


def _polygons_reordered(rows: FileRows, order: IntArray) -> FloatArray | None:
    if rows.polygon_xy is None or rows.polygon_points is None:
        return None
    offsets = np.concatenate(([0], np.cumsum(rows.polygon_points))).astype(np.int64)
    points, _ = ragged.gathered(rows.polygon_xy, offsets, order)
    return points


def _corners(rows: FileRows) -> FloatArray:
    return np.full((len(rows.number), 8), np.nan) if rows.corners is None else rows.corners


def column_of(parts: list[IntArray]) -> IntArray:
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)


def _with_rejected(rows: FileRows, numbers: list[int]) -> FileRows:
    """`rows` followed by a placeholder row for each rejected number."""
    n = len(numbers)
    return FileRows(
        xyxy=np.concatenate([rows.xyxy, np.full((n, 4), np.nan)]),
        class_id=np.concatenate([rows.class_id, np.full(n, -1, dtype=np.int64)]),
        confidence=np.concatenate([rows.confidence, np.full(n, np.nan)]),
        has_confidence=np.concatenate([rows.has_confidence, np.zeros(n, dtype=bool)]),
        difficult=np.concatenate([rows.difficult, np.zeros(n, dtype=bool)]),
        number=np.concatenate([rows.number, np.array(numbers, dtype=np.int64)]),
        corners=None if rows.corners is None else np.concatenate([rows.corners, np.full((n, 8), np.nan)]),
        polygon_points=None
        if rows.polygon_points is None
        else np.concatenate([rows.polygon_points, np.zeros(n, dtype=np.int64)]),
        polygon_xy=rows.polygon_xy,
    )


def read_sizes(folder: Folder, asset_ids: list[str]) -> tuple[FloatArray, FloatArray]:
    """Image widths and heights from an optional `sizes.json` {name: [width, height]}; NaN if unknown.

    Names are joined like assets: `a`, `a.jpg` and YOLO's `a.txt` stem meet.
    """
    widths = np.full(len(asset_ids), np.nan)
    heights = np.full(len(asset_ids), np.nan)
    file = folder.find(lambda name: 0 if name == SIZES_FILE else None)
    if file is None:
        return widths, heights
    try:
        document = orjson.loads(folder.text(file))
    except orjson.JSONDecodeError as error:
        where = f"line {error.lineno} column {error.colno}"
        raise DatasetError(f"{file.name}: {where}: expected valid JSON") from None
    if not isinstance(document, dict):
        raise DatasetError(f"{file.name}: expected an object {{image name: [width, height]}}")
    sizes = {asset_key(str(name)): (name, value) for name, value in document.items()}
    for index, asset_id in enumerate(asset_ids):
        name, value = sizes.get(asset_key(asset_id), (None, None))
        if name is None:
            continue
        if not (isinstance(value, list) and len(value) == 2 and all(_positive(v) for v in value)):
            raise DatasetError(f"{file.name}: {quoted(name)}: expected [width, height], two positive numbers")
        widths[index], heights[index] = value
    return widths, heights


def _positive(value: Any) -> bool:
    return type(value) in (int, float) and value > 0
