"""A reading of part of a side's rows: a step of a pipeline applied to some images, to the boxes
of some classes (a second model's, merged in), or to some boxes within the images whatever their
class (two writers of one file), and not to the others.

The geometry is one of the side's readings (a convention, a frame, both); the group is the images,
the classes (as written) or the boxes (each row's place in its file, `row_ids`) whose rows it places
clearly better (`readings.rescore` finds them).
The rows outside the group are left as read. No read option applies it: the warning names the
group, how many, and the score read that way, and the step that wrote them is to fix.
"""

from __future__ import annotations

from typing import Final, Literal

import numpy as np
from msgspec.structs import replace

from handler.boxes import BoolArray, IntArray, Parsed, ParsedRows
from handler.readings.classes import written_keys
from handler.readings.reading import Reading

GroupKind = Literal["images", "classes", "boxes"]
# Members named in the reading's words; the findings' `only` lists them all.
SHOWN: Final = 3


def row_ids(rows: ParsedRows) -> IntArray:
    """Each row's place in its side's file: what names a row of a group of boxes on any subset of
    the rows (a subset keeps its rows' `source_index`; the whole side's may number them in order)."""
    return rows.source_index if rows.source_index is not None else np.arange(len(rows), dtype=np.int64)


def rows_in(parsed: Parsed, kind: GroupKind, members: frozenset[str]) -> BoolArray:
    """The rows of the images (asset ids), classes (as written) or boxes (row ids) in `members`."""
    rows = parsed.rows
    if kind == "boxes":
        chosen_rows: BoolArray = np.isin(row_ids(rows), np.array(sorted(int(m) for m in members)))
        return chosen_rows
    if kind == "images":
        chosen = np.array([asset in members for asset in parsed.images.asset_ids] + [False])
        last = len(chosen) - 1
        image = np.where((rows.image >= 0) & (rows.image < last), rows.image, last)
        in_group: BoolArray = chosen[image]
        return in_group
    key_of_row, keys = written_keys(parsed)
    chosen = np.array([key in members for key in keys] + [False])
    in_class: BoolArray = chosen[key_of_row]  # a row with no key (-1) takes the last: False
    return in_class


def _mixed(mask: BoolArray, read: ParsedRows, rows: ParsedRows) -> ParsedRows:
    """`read` on the rows of `mask`, `rows` (as they were) on the others."""
    normalized = read.normalized
    if normalized is not None:
        before = rows.normalized if rows.normalized is not None else np.zeros(len(rows), dtype=bool)
        normalized = np.where(mask, normalized, before)
    return replace(read, xyxy=np.where(mask[:, None], read.xyxy, rows.xyxy), normalized=normalized)


def only(
    reading: Reading, kind: GroupKind, members: frozenset[str], total: int, said: bool, images: int = 0
) -> Reading:
    """`reading` applied to the group's rows only; `said`: its words name the group (a group of
    boxes: `total` boxes, `images` the images they are on)."""

    def transform(parsed: Parsed) -> tuple[ParsedRows, list[str]]:
        read, names = reading.transform(parsed)
        return _mixed(rows_in(parsed, kind, members), read, parsed.rows), names

    listed = sorted(members, key=lambda member: (len(member), member)) if kind == "boxes" else sorted(members)
    shown = ", ".join(listed[:SHOWN]) + (", …" if len(listed) > SHOWN else "")
    if kind == "boxes":
        kept = " kept" if reading.side == "pred" else ""
        where = (
            f"on {len(listed)} of the {total} boxes{kept}, within {images} images whatever their class "
            f"(the file's boxes {shown}, counted from 0)"
        )
    else:
        where = f"on {len(listed)} of {total} {kind} ({shown})"
    return replace(reading, transform=transform, only=tuple(listed), part=where if said else "")
