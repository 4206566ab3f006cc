"""The one ending of every reader: parsed columns become a `Dataset` under one set of rules.

A reader only parses (`ParsedRows`: columns, and the rows it could not read with why).
`build_dataset` skips and counts, in row order, every row that breaks a constraint of
`schemas/dataset.schema.json` or lies wholly outside its image, fills a missing confidence
with 1.0 (contract §3) and resolves the coordinate frame, for every format alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, Final

import msgspec
import numpy as np
import numpy.typing as npt
from msgspec.structs import replace

from handler.boxes import UNKNOWN_CLASS as UNKNOWN_CLASS
from handler.boxes import UNKNOWN_IMAGE as UNKNOWN_IMAGE
from handler.boxes import (
    BoolArray,
    BoxTable,
    Dataset,
    FloatArray,
    Images,
    IntArray,
    Parsed,
    ParsedRows,
    SkippedBox,
)
from handler.datasets.columns import NEGATIVE_SIZE, bad_box_rows, box_problem, finite_rows
from handler.datasets.frames import outside_image, to_common_frame
from handler.engine.rotated import convex_quads, envelope, rectangles
from handler.resources import load_json_resource

LISTED_SKIPS: Final = 20
_ANNOTATION: Final[dict[str, Any]] = load_json_resource("schemas/dataset.schema.json")["$defs"]["annotation"]
CONFIDENCE_RANGE: Final = (
    float(_ANNOTATION["properties"]["confidence"]["minimum"]),
    float(_ANNOTATION["properties"]["confidence"]["maximum"]),
)
LABEL_MIN_LENGTH: Final = int(_ANNOTATION["properties"]["label"]["minLength"])


# Rows checked at a time: each rule's temporaries stay small (in cache, no page faults).
BLOCK: Final = 1 << 16


class _Checked(msgspec.Struct, frozen=True):
    """The columns the rules look at, for a block of rows, with the confidence filled in."""

    xyxy: FloatArray
    class_id: IntArray
    confidence: FloatArray
    written: BoolArray
    normalized: BoolArray | None  # None: no row is
    widths: FloatArray  # of each row's image, NaN where unknown
    heights: FloatArray
    sized: bool
    angle: FloatArray | None  # None: no row is rotated

    @property
    def extent(self) -> FloatArray:
        """Each row's axis-aligned extent (its box, or the envelope of the box turned)."""
        return self.xyxy if self.angle is None else envelope(self.xyxy, self.angle)


class _Columns(msgspec.Struct, frozen=True):
    """Every row's columns, the confidence filled in; the rules see them a block at a time."""

    rows: ParsedRows
    confidence: FloatArray
    written: BoolArray
    images: Images

    def block(self, start: int, stop: int) -> _Checked:
        rows, image = self.rows, self.rows.image[start:stop]
        return _Checked(
            rows.xyxy[start:stop],
            rows.class_id[start:stop],
            self.confidence[start:stop],
            self.written[start:stop],
            None if rows.normalized is None else rows.normalized[start:stop],
            _per_row(self.images.widths, image),
            _per_row(self.images.heights, image),
            rows.sized,
            None if rows.angle is None else rows.angle[start:stop],
        )


def _per_row(sizes: FloatArray, image: IntArray) -> FloatArray:
    """Each row's image size; NaN for a row on no known image (a rejected row)."""
    if not len(image) or (image.min() >= 0 and image.max() < len(sizes)):
        return sizes.take(image)  # every row on a known image: one gather, no masks
    known = (image >= 0) & (image < len(sizes))
    return np.where(known, sizes[np.where(known, image, 0)] if len(sizes) else np.nan, np.nan)


def _fill_confidence(rows: ParsedRows) -> tuple[FloatArray, BoolArray]:
    """contract §3, its one place: a row that wrote no confidence is fully confident (1.0).

    Where every row wrote one, the column is the parser's own (not a copy)."""
    n = len(rows)
    if rows.confidence is None:
        return np.ones(n), np.zeros(n, dtype=bool)
    written = ~np.isnan(rows.confidence) if rows.has_confidence is None else rows.has_confidence
    if written.all():
        return rows.confidence, written
    return np.where(written, rows.confidence, 1.0), written


def _out_of_range(checked: _Checked) -> BoolArray:
    low, high = CONFIDENCE_RANGE
    with np.errstate(invalid="ignore"):
        outside = (checked.confidence < low) | (checked.confidence > high)
    out_of_range: BoolArray = checked.written & np.isfinite(checked.confidence) & outside
    return out_of_range


def _outside_phrase(checked: _Checked, row: int) -> str:
    if checked.normalized is not None and checked.normalized[row]:
        frame = "the 0-1 normalised image"
    else:
        frame = f"its {checked.widths[row]:g}x{checked.heights[row]:g} image"
    box = ", ".join(f"{v:g}" for v in checked.xyxy[row])
    turned = (
        f" turned {checked.angle[row]:g} degrees" if checked.angle is not None and checked.angle[row] else ""
    )
    return f"box [{box}]{turned} lies entirely outside {frame}"


class _Rule(msgspec.Struct, frozen=True):
    """A per-box constraint: the rows that break it, and why one does, in words."""

    breaks: Callable[[_Checked], BoolArray]
    phrase: Callable[[_Checked, int], str]


# In order: a row is skipped for the first rule it breaks.
_RULES: Final = (
    _Rule(lambda c: c.class_id < 0, lambda _c, _r: "expected a non-empty label"),
    _Rule(lambda c: bad_box_rows(c.xyxy), lambda c, r: box_problem(c.xyxy[r].tolist(), c.sized)),
    _Rule(
        lambda c: np.zeros(len(c.xyxy), dtype=bool) if c.angle is None else ~np.isfinite(c.angle),
        lambda _c, _r: "rotation is not a finite number",
    ),
    _Rule(
        lambda c: c.written & ~np.isfinite(c.confidence),
        lambda _c, _r: "confidence is not a finite number",
    ),
    _Rule(
        _out_of_range,
        lambda c, r: (
            f"confidence {c.confidence[r]:g} is outside [{CONFIDENCE_RANGE[0]:g}, {CONFIDENCE_RANGE[1]:g}]"
        ),
    ),
    _Rule(lambda c: outside_image(c.extent, c.widths, c.heights, c.normalized), _outside_phrase),
)
# Each row's verdict: KEPT, 1 + the index of the first rule it breaks, or REJECTED by the parser.
KEPT: Final = 0
REJECTED: Final = len(_RULES) + 1


# The confidence rules' reasons, the Python API's too (handler.inputs.arguments).
CONFIDENCE_NOT_FINITE: Final = "confidence not finite"
CONFIDENCE_OUT_OF_RANGE: Final = "confidence out of range"
# Each rule's reason in a word or two, for the count by reason; a bad box by its first defect.
_REASONS: Final = (
    "no label",
    "bad box",
    "rotation not finite",
    CONFIDENCE_NOT_FINITE,
    CONFIDENCE_OUT_OF_RANGE,
    "outside image",
)
REJECTED_REASON: Final = "unreadable row"


def bad_box_reasons(xyxy: FloatArray, sized: bool) -> npt.NDArray[np.str_]:
    """`box_problem`'s defect of each row of `xyxy`, in a word or two (in the layout written)."""
    with np.errstate(invalid="ignore"):
        x_swapped = xyxy[:, 2] < xyxy[:, 0]
    reason = (
        np.full(len(xyxy), NEGATIVE_SIZE) if sized else np.where(x_swapped, "x_max < x_min", "y_max < y_min")
    )
    return np.where(finite_rows(xyxy), reason, "coordinate not finite")


def _block_verdicts(checked: _Checked) -> npt.NDArray[np.uint8]:
    """KEPT, or the first rule broken (1-based), for each row of a block."""
    broken = [rule.breaks(checked) for rule in _RULES]
    verdict = np.zeros(len(checked.class_id), dtype=np.uint8)
    if np.logical_or.reduce(broken, initial=False).any():
        for number in range(len(_RULES), 0, -1):  # the first rule broken is written last
            verdict[broken[number - 1]] = number
    return verdict


def _verdicts(columns: _Columns) -> npt.NDArray[np.uint8]:
    """Each row's verdict, the rules run a block at a time; a rejected row's columns are
    placeholders that no rule judges."""
    n = len(columns.rows)
    verdict = np.empty(n, dtype=np.uint8)
    for start in range(0, n, BLOCK):
        stop = min(start + BLOCK, n)
        verdict[start:stop] = _block_verdicts(columns.block(start, stop))
    verdict[np.fromiter(columns.rows.rejected, dtype=np.int64, count=len(columns.rows.rejected))] = REJECTED
    return verdict


def _skip_reasons(columns: _Columns, verdict: npt.NDArray[np.uint8]) -> dict[str, int]:
    """How many rows were skipped for each reason (a row for the first rule it breaks): the
    rules' reasons in alphabetical order, then the parser's in row order."""
    counts = np.bincount(verdict[verdict != KEPT], minlength=REJECTED + 1)
    found: Counter[str] = Counter(
        {reason: int(count) for reason, count in zip(_REASONS, counts[1:REJECTED], strict=True) if count}
    )
    bad_box = _REASONS.index("bad box") + 1
    if counts[bad_box]:
        del found["bad box"]
        found.update(bad_box_reasons(columns.rows.xyxy[verdict == bad_box], columns.rows.sized).tolist())
    ordered = Counter(dict(sorted(found.items())))
    ordered.update(columns.rows.reasons.get(row, REJECTED_REASON) for row in columns.rows.rejected)
    return dict(ordered)


# The first rules: a row breaking one is not a box at all (the others judge a box).
NOT_A_BOX_RULES: Final = 4


def _numbered(rows: ParsedRows, verdict: npt.NDArray[np.uint8]) -> IntArray:
    """Each row's `source_index`: the format's, else its place among the rows that are a box
    (-1 for the others), as a folder's boxes are numbered in its files."""
    if rows.source_index is not None:
        return rows.source_index
    formed = (verdict == KEPT) | ((verdict > NOT_A_BOX_RULES) & (verdict != REJECTED))
    index = np.full(len(rows), -1, dtype=np.int64)
    index[formed] = np.arange(np.count_nonzero(formed))
    return index


def _problem(source: str, columns: _Columns, row: int, verdict: int) -> SkippedBox:
    """A skipped row, named where it was written, with why in the parser's words, the format's
    or the first rule's it breaks."""
    rows = columns.rows
    problem = rows.rejected.get(row) or (rows.explain(row) if rows.explain else None)
    if problem is None:
        problem = _RULES[verdict - 1].phrase(columns.block(row, row + 1), 0)
    return SkippedBox(source, rows.position(row), problem)


def _crowd(rows: ParsedRows, verdict: npt.NDArray[np.uint8], skipped: int) -> BoolArray | None:
    """The crowd regions among the rows kept; None when there are none."""
    if rows.crowd is None:
        return None
    crowd: BoolArray = rows.crowd & (verdict == KEPT) if skipped else rows.crowd
    return crowd if crowd.any() else None


def _keep(verdict: npt.NDArray[np.uint8], skipped: int, crowd: BoolArray | None) -> BoolArray | None:
    """The rows that become boxes; None when they are all of them."""
    if not skipped and crowd is None:
        return None
    keep: BoolArray = verdict == KEPT
    return keep if crowd is None else keep & ~crowd


def _kept(column: Any, keep: BoolArray | None) -> Any:
    """The kept rows of a column: the column itself when every row is kept (no copy)."""
    return column if keep is None or column is None else column[keep]


def _rectangles_of_corners(rows: ParsedRows, images: Images) -> ParsedRows:
    """Rows written as corners as the rectangles holding them: a normalised row on an image of
    known size is scaled to pixels first (scaling a rectangle's corners on an image that is not
    square does not give a rectangle, so the rectangle is taken where its shape is true). A row
    left in 0-1 keeps its quadrilateral (`quads`): the shape scored, the same in any frame."""
    if rows.corners is None:
        return rows
    quad = rows.corners.reshape(-1, 4, 2).copy()
    normalized = np.zeros(len(rows), dtype=bool) if rows.normalized is None else rows.normalized
    size = np.stack((_per_row(images.widths, rows.image), _per_row(images.heights, rows.image)), axis=1)
    scaled = normalized & np.isfinite(size).all(axis=1)
    quad[scaled] *= size[scaled, None, :]
    unscaled = normalized & ~scaled & np.isfinite(quad).all(axis=(1, 2))
    quads = None
    if unscaled.any():
        quad[unscaled] = convex_quads(quad[unscaled])
        quads = np.where(unscaled[:, None, None], quad, np.nan)
    with np.errstate(invalid="ignore"):
        xyxy, angle = rectangles(quad)
    return replace(rows, xyxy=xyxy, angle=angle, normalized=normalized & ~scaled, corners=None, quads=quads)


def _quads_of_boxes(rows: ParsedRows) -> FloatArray | None:
    """The rows' quadrilaterals still behind their boxes: a reading that moved a row's box (another
    frame, a scale) or read it in pixels leaves its quadrilateral behind, the box then scored."""
    if rows.quads is None:
        return None
    held = np.flatnonzero(np.isfinite(rows.quads[:, 0, 0]))
    xyxy, angle = rectangles(rows.quads[held])
    same = (xyxy == rows.xyxy[held]).all(axis=1)
    if rows.angle is not None:
        same &= angle == rows.angle[held]
    if rows.normalized is not None:
        same &= rows.normalized[held]
    if same.all():
        return rows.quads
    quads = rows.quads.copy()
    quads[held[~same]] = np.nan
    return quads if same.any() else None


def rebuild(parsed: Parsed, rows: ParsedRows, class_names: list[str]) -> Dataset:
    """The dataset of other rows (another reading of them) parsed from the same source."""
    return build_dataset(parsed.source, parsed.format_name, rows, parsed.images, class_names)


def build_dataset(
    source: str, format_name: str, rows: ParsedRows, images: Images, class_names: list[str]
) -> Dataset:
    """The dataset of `rows`: defective rows skipped and counted, crowd regions left out.

    Columnar: no Python work per row but per listed skip, and when every row is kept the
    boxes are the parser's own columns, not copies."""
    rows = _rectangles_of_corners(rows, images)
    confidence, written = _fill_confidence(rows)
    columns = _Columns(rows, confidence, written, images)
    verdict = _verdicts(columns)
    skipped = int(np.count_nonzero(verdict))
    crowd = _crowd(rows, verdict, skipped)
    keep = _keep(verdict, skipped, crowd)
    listed = [
        _problem(source, columns, row, int(verdict[row]))
        for row in np.flatnonzero(verdict)[:LISTED_SKIPS].tolist()
    ]
    boxes = BoxTable.build(
        xyxy=_kept(rows.xyxy, keep),
        class_id=_kept(rows.class_id, keep),
        image=_kept(rows.image, keep),
        confidence=_kept(confidence, keep),
        source_index=_kept(_numbered(rows, verdict), keep),
        difficult=_kept(rows.difficult, keep),
        angle=_kept(rows.angle, keep),
        masks=_kept(rows.masks, keep),
        quads=_kept(_quads_of_boxes(rows), keep),
    )
    boxes, frame_normalized = to_common_frame(
        source, boxes, _kept(rows.normalized, keep), images.widths, images.heights, images.asset_ids
    )
    return Dataset(
        source=source,
        format=format_name,
        asset_ids=images.asset_ids,
        class_names=class_names,
        boxes=boxes,
        widths=images.widths,
        heights=images.heights,
        normalized=frame_normalized,
        skipped=listed,
        skipped_count=skipped,
        crowd_excluded=0 if crowd is None else int(np.count_nonzero(crowd)),
        asset_tags=images.tags,
        confidence_count=int(np.count_nonzero(_kept(written, keep))),
        skip_reasons=_skip_reasons(columns, verdict) if skipped else {},
        parsed=Parsed(source, format_name, rows, images, class_names),
    )
