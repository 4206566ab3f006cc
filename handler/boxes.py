"""The one box model that travels from the readers through the engine to the report.

A `BoxTable` keeps every box of a dataset as parallel numpy arrays (the idea of
supervision's `Detections`): validated once at construction, and a boolean mask or
index array returns the same type, so filtering by confidence is
`boxes[boxes.confidence >= t]`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

import msgspec
import numpy as np
import numpy.typing as npt
from msgspec import field
from msgspec.structs import force_setattr, replace

from handler.kernels import ragged, run_store

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def _row_positions(index: Any, n: int) -> IntArray | None:
    """The positions a row index selects, as integers: a boolean mask of the `n` rows or an integer
    array; None for anything else (a slice, a wrong-length mask: plain indexing, and its errors)."""
    if not isinstance(index, np.ndarray) or index.ndim != 1:
        return None
    if index.dtype == np.bool_:
        return np.flatnonzero(index) if len(index) == n else None
    return index if np.issubdtype(index.dtype, np.integer) else None


def rows_taken(column: Any, rows: IntArray) -> Any:
    """`column[rows]` for integer `rows`, by `np.take`: (N, 4) fancy indexing copies row by row far
    more slowly (every gather of the boxes' columns goes through here)."""
    return np.take(column, rows, axis=0)


def _gathered_rows(column: Any, index: Any, rows: IntArray | None) -> Any:
    """`column[index]`; by `rows_taken` on the integer `rows` when there are some."""
    return column[index] if rows is None else rows_taken(column, rows)


RunArray = npt.NDArray[np.uint16]
AssetTags = tuple[str, ...]  # an asset's tags (native format), for slices of the report


def box_area(xyxy: FloatArray) -> FloatArray:
    """(N,) area of (N, 4) boxes, `(x_max - x_min) * (y_max - y_min)`: the one home of box area."""
    area: FloatArray = (xyxy[:, 2] - xyxy[:, 0]) * (xyxy[:, 3] - xyxy[:, 1])
    return area


def quad_area(quads: FloatArray) -> FloatArray:
    """(N,) area of (N, 4, 2) quadrilaterals whose corners go round them (the shoelace formula)."""
    x, y = quads[..., 0], quads[..., 1]
    twice: FloatArray = (x * np.roll(y, -1, axis=1) - np.roll(x, -1, axis=1) * y).sum(axis=1)
    return np.abs(twice) / 2


def box_size(xyxy: FloatArray) -> FloatArray:
    """(N, 2) width and height of (N, 4) boxes."""
    size: FloatArray = xyxy[:, 2:] - xyxy[:, :2]
    return size


def is_turned(angle: FloatArray) -> BoolArray:
    """(N,) whether each box is rotated: an angle that is not a multiple of a whole turn.

    The remainder is taken only of the angles that are not 0 (usually none): a float column of
    temporaries the size of the table would otherwise be made for every upright dataset."""
    turned: BoolArray = angle != 0
    rows = np.flatnonzero(turned)
    turned[rows] = np.remainder(angle[rows], 360.0) != 0
    return turned


def joined_offsets(offsets: list[IntArray]) -> IntArray:
    """The offsets of ragged columns put one after the other."""
    starts = np.cumsum([0] + [o[-1] for o in offsets[:-1]])
    joined: IntArray = np.concatenate(
        [[0]] + [o[1:] + start for o, start in zip(offsets, starts, strict=True)]
    )
    return joined


# Compared by identity and weakly referenced: the engine measures a table's masks once.
class MaskRuns(msgspec.Struct, frozen=True, eq=False, weakref=True):
    """N instance masks as COCO's uncompressed RLE, concatenated (`engine/masks.py` makes and
    measures them).

    Row i's runs are `counts[offsets[i]:offsets[i + 1]]`: alternating run lengths of 0s and 1s
    over its `height` x `width` pixels read column by column (COCO's convention), background
    first (a mask starting on a pixel of the object starts with a run of 0), the runs summing to
    height x width. A row with no runs has no mask (its box is all there is); `height` and `width`
    are then 0. Runs, never bitmaps: a mask costs a few bytes per column it spans. The runs are
    stored in 16 bits (`kernels/run_store.py`: given wider, a run longer than 65,535 is stored as
    pieces with an empty run between two of them, the same pixels); `kernels.run_store.merged`
    gives them back as pycocotools writes them.
    """

    counts: RunArray
    offsets: IntArray
    height: IntArray
    width: IntArray

    def __post_init__(self) -> None:
        n = len(self.height)
        if len(self.offsets) != n + 1 or len(self.width) != n:
            raise ValueError(
                f"Expected `offsets` of length {n + 1} and `width` of length {n} but got "
                f"{len(self.offsets)} and {len(self.width)}"
            )
        if self.counts.dtype != np.uint16:
            # Half the memory of 32-bit runs, where both sides' masks are held through a run.
            counts, offsets = run_store.narrowed(self.counts.astype(np.uint32, copy=False), self.offsets)
            force_setattr(self, "counts", counts)
            force_setattr(self, "offsets", offsets)

    @classmethod
    def none(cls, n: int) -> MaskRuns:
        """n rows without a mask."""
        zeros = np.zeros(n, dtype=np.int64)
        return cls(np.empty(0, dtype=np.uint16), np.zeros(n + 1, dtype=np.int64), zeros, zeros.copy())

    @classmethod
    def concatenate(cls, parts: list[MaskRuns]) -> MaskRuns:
        if not parts:
            return cls.none(0)
        return cls(
            np.concatenate([p.counts for p in parts]),
            joined_offsets([p.offsets for p in parts]),
            np.concatenate([p.height for p in parts]),
            np.concatenate([p.width for p in parts]),
        )

    def __len__(self) -> int:
        return len(self.height)

    def __getitem__(self, index: Any) -> MaskRuns:
        rows = np.arange(len(self))[index]
        if isinstance(index, slice) and index.step in (None, 1) and len(rows):
            # A range of rows: their runs are one range, a view.
            first, last = self.offsets[rows[0]], self.offsets[rows[-1] + 1]
            offsets = self.offsets[rows[0] : rows[-1] + 2] - first
            return MaskRuns(self.counts[first:last], offsets, self.height[rows], self.width[rows])
        counts, offsets = ragged.gathered(self.counts, self.offsets, rows)
        return MaskRuns(counts, offsets, self.height[rows], self.width[rows])

    @property
    def present(self) -> BoolArray:
        """(N,) whether each row has a mask."""
        has: BoolArray = self.offsets[1:] > self.offsets[:-1]
        return has


class UnmadeMasks(msgspec.Struct, frozen=True, eq=False):
    """N instance masks of which some rows are still the polygons they were written as: a row
    with parts is drawn by them on its `height` x `width` image, any other row is `runs`' row.
    Rasterising waits until masks are known to be scored (`engine/masks.py` `made`), so that a
    ground truth of polygons read for a box run costs only its parsed vertices.

    Row i's parts are `part_offsets[row_offsets[i]:row_offsets[i + 1] + 1]`, part k's points
    `points[part_offsets[k]:part_offsets[k + 1]]` ((P, 2) pixels, finite).
    """

    runs: MaskRuns
    points: FloatArray
    part_offsets: IntArray
    row_offsets: IntArray
    height: IntArray
    width: IntArray

    @classmethod
    def of_runs(cls, runs: MaskRuns) -> UnmadeMasks:
        """Masks that are all runs already (no row drawn as polygons)."""
        zeros = np.zeros(len(runs), dtype=np.int64)
        no_rows = np.zeros(len(runs) + 1, dtype=np.int64)
        return cls(runs, np.empty((0, 2)), np.zeros(1, dtype=np.int64), no_rows, zeros, zeros.copy())

    @classmethod
    def concatenate(cls, parts: list[UnmadeMasks]) -> UnmadeMasks:
        return cls(
            MaskRuns.concatenate([p.runs for p in parts]),
            np.concatenate([p.points for p in parts]),
            joined_offsets([p.part_offsets for p in parts]),
            joined_offsets([p.row_offsets for p in parts]),
            np.concatenate([p.height for p in parts]),
            np.concatenate([p.width for p in parts]),
        )

    def __len__(self) -> int:
        return len(self.height)

    def __getitem__(self, index: Any) -> UnmadeMasks:
        rows = np.arange(len(self))[index]
        every_part = np.arange(len(self.part_offsets) - 1, dtype=np.int64)
        parts, row_offsets = ragged.gathered(every_part, self.row_offsets, rows)
        points, part_offsets = ragged.gathered(self.points, self.part_offsets, parts)
        return UnmadeMasks(
            self.runs[rows],
            points,
            part_offsets,
            row_offsets,
            self.height[rows],
            self.width[rows],
        )

    @property
    def drawn(self) -> BoolArray:
        """(N,) whether each row is drawn as polygons (not yet runs)."""
        has: BoolArray = self.row_offsets[1:] > self.row_offsets[:-1]
        return has

    @property
    def present(self) -> BoolArray:
        """(N,) whether each row has a mask."""
        has: BoolArray = self.drawn | self.runs.present
        return has


# A table's masks: runs, or some rows still polygons (`UnmadeMasks`).
Masks = MaskRuns | UnmadeMasks


class WrittenMasks(msgspec.Struct, frozen=True, eq=False):
    """N instance masks still the JSON text a file wrote them as (COCO's `segmentation`): row i's
    is `text[starts[i]:ends[i]]` (`null` where none), on its image of `height` x `width` (NaN:
    unknown). A box run never parses them; they are parsed (`datasets/segmentation.py`
    `readable`) only once both sides have masks, so a value that cannot be read is found then.
    Selecting rows selects their bounds, the text is shared.
    """

    text: bytes
    starts: IntArray
    ends: IntArray
    height: FloatArray
    width: FloatArray
    # (N,) wrote a polygon list (on an image of known size) or an RLE object, not empty
    present: BoolArray

    @classmethod
    def concatenate(cls, parts: list[WrittenMasks]) -> WrittenMasks:
        shifts = np.cumsum([0] + [len(p.text) for p in parts[:-1]])
        return cls(
            b"".join(p.text for p in parts),
            np.concatenate([p.starts + shift for p, shift in zip(parts, shifts, strict=True)]),
            np.concatenate([p.ends + shift for p, shift in zip(parts, shifts, strict=True)]),
            np.concatenate([p.height for p in parts]),
            np.concatenate([p.width for p in parts]),
            np.concatenate([p.present for p in parts]),
        )

    @classmethod
    def none(cls, n: int) -> WrittenMasks:
        """n rows without a mask."""
        return cls(
            b"null",
            np.zeros(n, np.int64),
            np.full(n, 4, np.int64),
            np.full(n, np.nan),
            np.full(n, np.nan),
            np.zeros(n, dtype=bool),
        )

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, index: Any) -> WrittenMasks:
        return WrittenMasks(
            self.text,
            self.starts[index],
            self.ends[index],
            self.height[index],
            self.width[index],
            self.present[index],
        )


# A table's masks as read: `Masks`, or (COCO's) the text they were written as, to be parsed.
TableMasks = Masks | WrittenMasks


def concatenate_masks(parts: list[Masks]) -> Masks:
    """The masks of `parts` one after the other: runs where every part is runs."""
    runs = [p for p in parts if isinstance(p, MaskRuns)]
    if len(runs) == len(parts):
        return MaskRuns.concatenate(runs)
    return UnmadeMasks.concatenate(
        [p if isinstance(p, UnmadeMasks) else UnmadeMasks.of_runs(p) for p in parts]
    )


def concatenate_table_masks(parts: list[TableMasks]) -> TableMasks:
    """`concatenate_masks`, or text where some part is text (the others then have no mask)."""
    made = [p for p in parts if not isinstance(p, WrittenMasks)]
    if len(made) == len(parts):
        return concatenate_masks(made)
    if any(p.present.any() for p in made):
        raise ValueError("Expected masks written as text joined only to rows without a mask")
    return WrittenMasks.concatenate(
        [p if isinstance(p, WrittenMasks) else WrittenMasks.none(len(p)) for p in parts]
    )


class BoxTable(msgspec.Struct, frozen=True):
    """N boxes as parallel arrays.

    Attributes:
        xyxy: (N, 4) float64, `[x_min, y_min, x_max, y_max]`.
        class_id: (N,) int64, index into the owning dataset's class names.
        confidence: (N,) float64; 1.0 where the source had none (contract §3).
        image: (N,) int64, index into the owning dataset's assets.
        source_index: (N,) int64, the box's position in its source file, for reports.
        difficult: (N,) bool, VOC's `difficult` flag (kept, only flagged).
        angle: (N,) float64, degrees clockwise on the image about the box's centre; `xyxy` is
            the box before turning (0: an axis-aligned box; `engine/rotated.py`).
        masks: each box's instance mask (`MaskRuns`; `UnmadeMasks` while some are polygons not
            yet rasterised; `WrittenMasks` while still the text a file wrote, until the pairing),
            its `xyxy` then being the mask's extent where the format wrote no box; None: no row
            has a mask.
        quads: (N, 4, 2) the convex quadrilateral a format wrote as four corners in 0-1 of an image
            of unknown size, NaN for the other rows: scaled by the image's size it is the shape
            drawn, and its IoU with another is the same in either frame; `xyxy` and `angle` are
            the rectangle holding it in that frame, the box's size. None: no row has one.
    """

    xyxy: FloatArray
    class_id: IntArray
    confidence: FloatArray
    image: IntArray
    source_index: IntArray
    difficult: BoolArray
    angle: FloatArray
    masks: TableMasks | None = None
    quads: FloatArray | None = None

    def __post_init__(self) -> None:
        n = len(self.class_id)
        if self.xyxy.shape != (n, 4):
            raise ValueError(f"Expected `xyxy` of shape ({n}, 4) but got {self.xyxy.shape}")
        if self.quads is not None and self.quads.shape != (n, 4, 2):
            raise ValueError(f"Expected `quads` of shape ({n}, 4, 2) but got {self.quads.shape}")
        for name in (*_COLUMNS[2:], *(("masks",) if self.masks is not None else ())):
            length = len(getattr(self, name))
            if length != n:
                raise ValueError(f"Expected `{name}` of length {n} but got {length}")

    @classmethod
    def build(
        cls,
        xyxy: Any,
        class_id: Any,
        image: Any,
        confidence: Any = None,
        source_index: Any = None,
        difficult: Any = None,
        angle: Any = None,
        masks: TableMasks | None = None,
        quads: FloatArray | None = None,
    ) -> BoxTable:
        """Build a table from array-likes, filling the optional columns with their defaults."""
        class_ids = np.asarray(class_id, dtype=np.int64).reshape(-1)
        n = len(class_ids)
        return cls(
            xyxy=np.asarray(xyxy, dtype=np.float64).reshape(n, 4),
            class_id=class_ids,
            confidence=(np.ones(n) if confidence is None else np.asarray(confidence, dtype=np.float64)),
            image=np.asarray(image, dtype=np.int64).reshape(-1),
            source_index=(
                np.arange(n, dtype=np.int64)
                if source_index is None
                else np.asarray(source_index, dtype=np.int64)
            ),
            difficult=(np.zeros(n, dtype=bool) if difficult is None else np.asarray(difficult, dtype=bool)),
            angle=np.zeros(n) if angle is None else np.asarray(angle, dtype=np.float64).reshape(-1),
            masks=masks,
            quads=quads,
        )

    @classmethod
    def empty(cls) -> BoxTable:
        return cls.build(np.empty((0, 4)), [], [])

    @classmethod
    def concatenate(cls, tables: list[BoxTable]) -> BoxTable:
        if not tables:
            return cls.empty()
        masked = any(t.masks is not None for t in tables)
        quads = any(t.quads is not None for t in tables)
        return cls(
            **{name: np.concatenate([getattr(t, name) for t in tables]) for name in _COLUMNS},
            masks=concatenate_table_masks([t.mask_runs for t in tables]) if masked else None,
            quads=np.concatenate([t.quad_corners for t in tables]) if quads else None,
        )

    def __len__(self) -> int:
        return len(self.class_id)

    def __getitem__(self, index: Any) -> BoxTable:
        rows = _row_positions(index, len(self))
        return BoxTable(
            **{name: _gathered_rows(getattr(self, name), index, rows) for name in _COLUMNS},
            masks=None if self.masks is None else self.masks[index],
            quads=None if self.quads is None else self.quads[index],
        )

    def with_columns(self, **columns: Any) -> BoxTable:
        """A copy with some columns replaced (e.g. re-indexed images or classes)."""
        return replace(self, **columns)

    @property
    def mask_runs(self) -> TableMasks:
        """The masks, rows without one where the table has none."""
        return MaskRuns.none(len(self)) if self.masks is None else self.masks

    @property
    def has_masks(self) -> bool:
        """Whether every box of a non-empty table has a mask: then it is scored on masks."""
        return self.masks is not None and len(self) > 0 and bool(self.masks.present.all())

    @property
    def quad_corners(self) -> FloatArray:
        """The quadrilaterals, NaN rows where the table has none."""
        return np.full((len(self), 4, 2), np.nan) if self.quads is None else self.quads

    @property
    def quadrilateral(self) -> BoolArray:
        """(N,) whether each box is a quadrilateral (`quads`), not the rectangle `xyxy`, `angle`."""
        if self.quads is None:
            return np.zeros(len(self), dtype=bool)
        written: BoolArray = np.isfinite(self.quads[:, 0, 0])
        return written

    @property
    def area(self) -> FloatArray:
        """The boxes' areas, a quadrilateral's its own."""
        area = box_area(self.xyxy)
        if self.quads is not None:
            rows = self.quadrilateral
            area[rows] = quad_area(self.quads[rows])
        return area

    @property
    def turned(self) -> BoolArray:
        """(N,) whether each box is not an upright `xyxy`: rotated, or a quadrilateral."""
        turned = is_turned(self.angle)
        return turned if self.quads is None else turned | self.quadrilateral


# The columns of one value per box (the masks are ragged: runs and offsets).
_COLUMNS: Final = tuple(name for name in BoxTable.__struct_fields__ if name not in ("masks", "quads"))


class SkippedBox(msgspec.Struct, frozen=True):
    """A per-box defect in an otherwise good file: skipped, counted and listed."""

    source: str
    position: str
    problem: str

    def to_dict(self) -> dict[str, str]:
        return {"source": self.source, "position": self.position, "problem": self.problem}


class LayoutNote(msgspec.Struct, frozen=True):
    """Text label lines that do not fit the column layout read, and the known layouts
    that fit them, as (layout name, share of the sampled lines), best first."""

    read: str
    read_share: float
    lines: int
    fitting: tuple[tuple[str, float], ...]


class SourceIds(msgspec.Struct, frozen=True):
    """A file's own image and class ids, as text, aligned with a dataset's assets and classes."""

    image_ids: list[str]
    class_ids: list[str]


class Dataset(msgspec.Struct, frozen=True):
    """One dataset read into the box model.

    `asset_ids[i]` names image i; `widths`/`heights` are NaN where unknown. `normalized`
    says the boxes are in 0-1 image fractions rather than pixels.
    """

    source: str
    format: str
    asset_ids: list[str]
    class_names: list[str]
    boxes: BoxTable
    widths: FloatArray
    heights: FloatArray
    normalized: bool = False
    skipped: list[SkippedBox] = field(default_factory=list)
    skipped_count: int = 0
    crowd_excluded: int = 0
    asset_tags: list[AssetTags] | None = None  # per asset (native format); None when not read
    # Data health: boxes kept that wrote a confidence, and the skipped rows by reason.
    confidence_count: int = 0
    skip_reasons: dict[str, int] = field(default_factory=dict)
    layout_note: LayoutNote | None = None  # text formats: the lines do not fit the layout read
    # How its image ids were joined to the images when not by the ids themselves ("file name",
    # "file stem", "place in the image list"): said in an info line and in the "read as" line.
    id_join: str | None = None
    # Images the GT lists that no label file here names, read as images without boxes (a text
    # folder's tool writes no file for an image it found nothing in): said in the "read as" line.
    unlabelled_images: int = 0
    # The parsed rows it was built from, for another reading of them.
    parsed: Parsed | None = None
    # The file's own ids of its images and classes (as text, aligned with `asset_ids` and
    # `class_names`) when it has them (COCO): what an export gives back to the user's tools.
    own_ids: SourceIds | None = None

    @property
    def image_count(self) -> int:
        return len(self.asset_ids)


# A row naming an image the dataset does not have (a COCO results list made for other images).
UNKNOWN_IMAGE: Final = "image not in the images"
# A row naming a class the dataset does not have (class ids of another list, or counted from 0).
UNKNOWN_CLASS: Final = "class not in the categories"


class Images(msgspec.Struct, frozen=True):
    """The assets of a dataset; sizes are NaN where unknown."""

    asset_ids: list[str]
    widths: FloatArray
    heights: FloatArray
    tags: list[AssetTags] | None = None  # per asset; None for formats without asset tags


# What a row wrote for its object (`ParsedRows.wrote`), and the shapes' names in the read-as line.
WROTE_BOX: Final = 0
WROTE_POLYGON: Final = 1
WROTE_MASK: Final = 2
WRITTEN_SHAPES: Final = {WROTE_POLYGON: "polygons", WROTE_MASK: "masks"}


class ParsedRows(msgspec.Struct, frozen=True):
    """One row per box as the format wrote it, before any rule but the format's own.

    `class_id` is -1 where the row names no usable class. `xyxy` and `confidence` are NaN
    where a value is not a number (the rules then skip the row); `has_confidence` says which
    rows wrote one (None: the rows whose value is not NaN; a format without confidences leaves
    both None). `rejected` maps the rows the parser could not read to why, `reasons` some of
    them to a reason in a few words for the count by reason (`UNKNOWN_IMAGE`, `UNKNOWN_CLASS`;
    else `unreadable row`). `sized` says the format wrote a box as a position and a
    size (COCO's `[x, y, width, height]`, YOLO's centre and size), so that a bad box is named
    in those terms. `explain(row)` may phrase a skipped row in the format's own
    words (None: the builder's words). `position(row)` names where a row was written.
    """

    xyxy: FloatArray
    class_id: IntArray
    image: IntArray
    source_index: IntArray | None  # None: the well-formed rows numbered in order (`_numbered`)
    position: Callable[[int], str]
    confidence: FloatArray | None = None
    has_confidence: BoolArray | None = None
    normalized: BoolArray | None = None
    difficult: BoolArray | None = None
    crowd: BoolArray | None = None
    rejected: Mapping[int, str] = field(default_factory=dict)
    explain: Callable[[int], str | None] | None = None
    reasons: Mapping[int, str] = field(default_factory=dict)  # a rejected row's reason in a few words
    sized: bool = False
    # How `xyxy` was made from the four numbers written (`layouts.BOX_KINDS`), and the class as
    # written where classes are ids looked up in a table (a COCO results list's category_id; -1
    # where neither an integer nor text): what another reading of the rows starts from.
    convention: str = "x1 y1 x2 y2"
    written_class: npt.NDArray[np.signedinteger[Any]] | None = None  # int32 where the ids fit
    # A class written as text where ids are expected (a results list's `"category_id": "Person"`):
    # its `written_class` is -2 - i for the text `written_names[i]`.
    written_names: tuple[str, ...] = ()
    # Degrees clockwise about the box's centre, `xyxy` being the box before turning (BoxTable.angle);
    # None: every box is axis-aligned.
    angle: FloatArray | None = None
    # (N, 8) x1 y1 … x4 y4 of a format writing a box as its corners (YOLO OBB, DOTA), in the rows'
    # frame, NaN where a row wrote none: the builder makes them rectangles (`xyxy`, `angle`), in
    # pixels where the image's size is known (else keeping them too: `quads`). None: the boxes are
    # `xyxy` (and `angle`).
    corners: FloatArray | None = None
    # (N, 4, 2) the quadrilaterals of the rows whose corners stay 0-1 of an image of unknown size,
    # NaN for the others (`BoxTable.quads`), beside the rectangles the builder made of them; a
    # reading that moves a row's box leaves its quadrilateral behind. None: no row has one.
    quads: FloatArray | None = None
    # Each row's instance mask (`TableMasks`, pixels of its image, made by `engine/masks.py`); a
    # row that wrote none has no runs. None: no row wrote a mask.
    masks: TableMasks | None = None
    # (N,) what each row wrote in place of a box (`WROTE_POLYGON`, `WROTE_MASK`: its box is then the
    # shape's extent, a convention the file does not have) or `WROTE_BOX`. None: every row wrote a box.
    wrote: IntArray | None = None

    def __len__(self) -> int:
        return len(self.class_id)

    def subset(self, keep: BoolArray) -> ParsedRows:
        """The rows of `keep`, in order, each still named where it was written."""
        return self.take(np.flatnonzero(keep))

    def take(self, origin: IntArray) -> ParsedRows:
        """The rows `origin` (ascending), in order, each still named where it was written: the few
        rows kept index every column, with no pass over the others."""

        def renumbered(table: Mapping[int, str]) -> dict[int, str]:
            rows = np.fromiter(table, dtype=np.int64, count=len(table))
            at = np.minimum(np.searchsorted(origin, rows), max(len(origin) - 1, 0))
            kept = rows[origin[at] == rows] if len(origin) else rows[:0]
            new = np.searchsorted(origin, kept).tolist()
            return dict(zip(new, (table[r] for r in kept.tolist()), strict=True))

        rejected, reasons = renumbered(self.rejected), renumbered(self.reasons)
        position, explain = self.position, self.explain

        def column(values: Any) -> Any:
            return None if values is None else values[origin]

        return replace(
            self,
            xyxy=rows_taken(self.xyxy, origin),
            class_id=self.class_id[origin],
            image=self.image[origin],
            source_index=self.source_index[origin] if self.source_index is not None else origin,
            position=lambda row: position(int(origin[row])),
            confidence=column(self.confidence),
            has_confidence=column(self.has_confidence),
            normalized=column(self.normalized),
            difficult=column(self.difficult),
            crowd=column(self.crowd),
            rejected=rejected,
            explain=None if explain is None else lambda row: explain(int(origin[row])),
            reasons=reasons,
            written_class=column(self.written_class),
            angle=column(self.angle),
            corners=column(self.corners),
            quads=column(self.quads),
            masks=column(self.masks),
            wrote=column(self.wrote),
        )


class Parsed(msgspec.Struct, frozen=True):
    """What a dataset was built from: building it again from other rows is another reading."""

    source: str
    format_name: str
    rows: ParsedRows
    images: Images
    class_names: list[str]


BoxKind = Literal["cx cy w h", "x y w h", "x1 y1 x2 y2"]
BOX_KINDS: Final[tuple[BoxKind, ...]] = ("cx cy w h", "x y w h", "x1 y1 x2 y2")
# The same conventions written y first (TF's `[ymin, xmin, ymax, xmax]`), each with its x-first kind:
# what a read option may name besides BOX_KINDS.
Y_FIRST: Final[dict[str, BoxKind]] = {
    "cy cx h w": "cx cy w h",
    "y x h w": "x y w h",
    "y1 x1 y2 x2": "x1 y1 x2 y2",
}
BOX_OPTIONS: Final[tuple[str, ...]] = (*BOX_KINDS, *Y_FIRST)


def corners(kind: BoxKind, box: FloatArray) -> FloatArray:
    """(n, 4) numbers written as `kind` → (n, 4) xyxy corners."""
    # Hostile numbers (1e308) overflow to inf: the box rules then skip the row, quietly.
    with np.errstate(over="ignore", invalid="ignore"):
        if kind == "cx cy w h":
            half = box[:, 2:] / 2
            return np.concatenate([box[:, :2] - half, box[:, :2] + half], axis=1)
        if kind == "x y w h":
            return np.concatenate([box[:, :2], box[:, :2] + box[:, 2:]], axis=1)
    copied: FloatArray = box.copy()
    return copied


def gathered(values: npt.NDArray[Any], rows: IntArray, fill: Any) -> npt.NDArray[Any]:
    """values[rows], `fill` where a row is -1 (no partner, no class): one home for every
    "the matched box's column" of the engine."""
    if not len(values):
        return np.full(len(rows), fill, dtype=np.result_type(values.dtype, np.min_scalar_type(fill)))
    found: npt.NDArray[Any] = np.where(rows >= 0, values[np.maximum(rows, 0)], fill)
    return found
