"""The one ending of every reader: parsed columns become a `Dataset` under one set of rules.

A reader only parses (`ParsedRows`: columns, and the rows it could not read with why).
`build_dataset` skips and counts, in row order, every row that breaks a constraint of
`schemas/dataset.schema.json` or lies wholly outside its image, fills a missing confidence
with 1.0 (SPEC §3) and resolves the coordinate frame, for every format alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from handler.boxes import AssetTags, BoolArray, BoxTable, Dataset, FloatArray, IntArray, SkippedBox
from handler.datasets.columns import NEGATIVE_SIZE, bad_box_rows, box_problem
from handler.datasets.frames import outside_image, to_common_frame
from handler.resources import load_json_resource

LISTED_SKIPS: Final = 20
_ANNOTATION: Final[dict[str, Any]] = load_json_resource("schemas/dataset.schema.json")["$defs"]["annotation"]
CONFIDENCE_RANGE: Final = (
    float(_ANNOTATION["properties"]["confidence"]["minimum"]),
    float(_ANNOTATION["properties"]["confidence"]["maximum"]),
)
LABEL_MIN_LENGTH: Final = int(_ANNOTATION["properties"]["label"]["minLength"])


@dataclass(frozen=True)
class Images:
    """The assets of a dataset; sizes are NaN where unknown."""

    asset_ids: list[str]
    widths: FloatArray
    heights: FloatArray
    tags: list[AssetTags] | None = None  # per asset; None for formats without asset tags


@dataclass(frozen=True)
class ParsedRows:
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

    def __len__(self) -> int:
        return len(self.class_id)


@dataclass(frozen=True)
class _Checked:
    """The columns the rules look at, with the confidence filled in."""

    rows: ParsedRows
    confidence: FloatArray
    written: BoolArray
    normalized: BoolArray
    images: Images
    widths: FloatArray  # of each row's image, NaN where unknown
    heights: FloatArray


def _fill_confidence(rows: ParsedRows) -> tuple[FloatArray, BoolArray]:
    """SPEC §3, its one place: a row that wrote no confidence is fully confident (1.0)."""
    n = len(rows)
    if rows.confidence is None:
        return np.ones(n), np.zeros(n, dtype=bool)
    written = ~np.isnan(rows.confidence) if rows.has_confidence is None else rows.has_confidence
    return np.where(written, rows.confidence, 1.0), written


def _out_of_range(checked: _Checked) -> BoolArray:
    low, high = CONFIDENCE_RANGE
    with np.errstate(invalid="ignore"):
        outside = (checked.confidence < low) | (checked.confidence > high)
    return checked.written & np.isfinite(checked.confidence) & outside


def _outside_phrase(checked: _Checked, row: int) -> str:
    if checked.normalized[row]:
        frame = "the 0-1 normalised image"
    else:
        frame = f"its {checked.widths[row]:g}x{checked.heights[row]:g} image"
    box = ", ".join(f"{v:g}" for v in checked.rows.xyxy[row])
    return f"box [{box}] lies entirely outside {frame}"


@dataclass(frozen=True)
class _Rule:
    """A per-box constraint: the rows that break it, and why one does, in words."""

    breaks: Callable[[_Checked], BoolArray]
    phrase: Callable[[_Checked, int], str]


# In order: a row is skipped for the first rule it breaks.
_RULES: Final = (
    _Rule(lambda c: c.rows.class_id < 0, lambda _c, _r: "expected a non-empty label"),
    _Rule(
        lambda c: bad_box_rows(c.rows.xyxy), lambda c, r: box_problem(c.rows.xyxy[r].tolist(), c.rows.sized)
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
    _Rule(
        lambda c: outside_image(c.rows.xyxy, c.widths, c.heights, c.normalized),
        _outside_phrase,
    ),
)


# Each rule's reason in a word or two, for the count by reason; a bad box by its first defect.
_REASONS: Final = ("no label", "bad box", "confidence not finite", "confidence out of range", "outside image")
REJECTED_REASON: Final = "unreadable row"
# A row naming an image the dataset does not have (a COCO results list made for other images).
UNKNOWN_IMAGE: Final = "image not in the images"
# A row naming a class the dataset does not have (class ids of another list, or counted from 0).
UNKNOWN_CLASS: Final = "class not in the categories"


def _bad_box_reasons(xyxy: FloatArray, sized: bool) -> npt.NDArray[np.str_]:
    """`box_problem`'s defect of each row of `xyxy`, in a word or two (in the layout written)."""
    with np.errstate(invalid="ignore"):
        x_swapped = xyxy[:, 2] < xyxy[:, 0]
    reason = (
        np.full(len(xyxy), NEGATIVE_SIZE) if sized else np.where(x_swapped, "x_max < x_min", "y_max < y_min")
    )
    return np.where(np.isfinite(xyxy).all(axis=1), reason, "coordinate not finite")


def _skip_reasons(checked: _Checked, rejected: BoolArray, broken: list[BoolArray]) -> dict[str, int]:
    """How many rows were skipped for each reason (a row for the first rule it breaks)."""
    stacked = np.array(broken, dtype=bool).reshape(len(_RULES), -1)
    skipped = ~rejected & stacked.any(axis=0)
    first = np.argmax(stacked, axis=0)[skipped]
    reasons = np.array(_REASONS, dtype="U32")[first]
    bad_box = first == _REASONS.index("bad box")
    reasons[bad_box] = _bad_box_reasons(checked.rows.xyxy[skipped][bad_box], checked.rows.sized)
    names, counts = np.unique(reasons, return_counts=True)
    found = Counter(dict(zip(names.tolist(), counts.tolist(), strict=True)))
    found.update(checked.rows.reasons.get(row, REJECTED_REASON) for row in checked.rows.rejected)
    return dict(found)


# The first rules: a row breaking one is not a box at all (the others judge a box).
NOT_A_BOX_RULES: Final = 3


def _numbered(rows: ParsedRows, rejected: BoolArray, broken: list[BoolArray]) -> IntArray:
    """Each row's `source_index`: the format's, else its place among the rows that are a box
    (-1 for the others), as a folder's boxes are numbered in its files."""
    if rows.source_index is not None:
        return rows.source_index
    formed = ~rejected & ~np.logical_or.reduce(broken[:NOT_A_BOX_RULES], initial=False)
    index = np.full(len(rows), -1, dtype=np.int64)
    index[formed] = np.arange(np.count_nonzero(formed))
    return index


def _skips(source: str, checked: _Checked) -> tuple[BoolArray, list[SkippedBox], dict[str, int], IntArray]:
    """Rows to skip, the first `LISTED_SKIPS` of them in row order with why, the count by
    reason, and each row's `source_index`."""
    rows = checked.rows
    rejected = np.zeros(len(rows), dtype=bool)
    rejected[list(rows.rejected)] = True
    # A rejected row's columns are placeholders: no rule looks at them.
    broken = [rule.breaks(checked) & ~rejected for rule in _RULES]
    skip = rejected | np.logical_or.reduce(broken, initial=False)
    listed = []
    for row in np.flatnonzero(skip)[:LISTED_SKIPS].tolist():
        problem = rows.rejected.get(row) or (rows.explain(row) if rows.explain else None)
        if problem is None:
            rule = next(rule for rule, mask in zip(_RULES, broken, strict=True) if mask[row])
            problem = rule.phrase(checked, row)
        listed.append(SkippedBox(source, rows.position(row), problem))
    return skip, listed, _skip_reasons(checked, rejected, broken), _numbered(rows, rejected, broken)


def _per_row(sizes: FloatArray, image: IntArray) -> FloatArray:
    """Each row's image size; NaN for a row on no known image (a rejected row)."""
    known = (image >= 0) & (image < len(sizes))
    return np.where(known, sizes[np.where(known, image, 0)] if len(sizes) else np.nan, np.nan)


def build_dataset(
    source: str, format_name: str, rows: ParsedRows, images: Images, class_names: list[str]
) -> Dataset:
    """The dataset of `rows`: defective rows skipped and counted, crowd regions left out."""
    confidence, written = _fill_confidence(rows)
    normalized = np.zeros(len(rows), dtype=bool) if rows.normalized is None else rows.normalized
    checked = _Checked(
        rows,
        confidence,
        written,
        normalized,
        images,
        _per_row(images.widths, rows.image),
        _per_row(images.heights, rows.image),
    )
    skip, listed, reasons, source_index = _skips(source, checked)
    crowd = ~skip & (np.zeros(len(rows), dtype=bool) if rows.crowd is None else rows.crowd)
    keep = ~skip & ~crowd
    boxes = BoxTable.build(
        xyxy=rows.xyxy[keep],
        class_id=rows.class_id[keep],
        image=rows.image[keep],
        confidence=confidence[keep],
        source_index=source_index[keep],
        difficult=None if rows.difficult is None else rows.difficult[keep],
    )
    boxes, frame_normalized = to_common_frame(
        source, boxes, normalized[keep], images.widths, images.heights, images.asset_ids
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
        skipped_count=int(np.count_nonzero(skip)),
        crowd_excluded=int(np.count_nonzero(crowd)),
        asset_tags=images.tags,
        confidence_count=int(np.count_nonzero(written[keep])),
        skip_reasons=reasons,
    )
