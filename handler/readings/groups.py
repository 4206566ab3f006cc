"""A reading of part of a side's rows: a step of a pipeline applied to some images, or to the boxes
of some classes (a second model's, merged in), and not to the others.

The geometry is one of the side's readings (a convention, a frame, both); the group is the images
or the classes (as written) whose rows it places clearly better (`readings.rescore` finds them).
The rows outside the group are left as read. No read option applies it: the warning names the
group, how many, and the score read that way, and the step that wrote them is to fix.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final, Literal

import numpy as np

from handler.boxes import BoolArray, Parsed, ParsedRows
from handler.readings.classes import written_keys
from handler.readings.reading import Reading

GroupKind = Literal["images", "classes"]
# Members named in the reading's words; the findings' `only` lists them all.
SHOWN: Final = 3


def rows_in(parsed: Parsed, kind: GroupKind, members: frozenset[str]) -> BoolArray:
    """The rows of the images (asset ids) or classes (as written) in `members`."""
    rows = parsed.rows
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


def only(reading: Reading, kind: GroupKind, members: frozenset[str], total: int, said: bool) -> Reading:
    """`reading` applied to the group's rows only; `said`: its words name the group."""

    def transform(parsed: Parsed) -> tuple[ParsedRows, list[str]]:
        read, names = reading.transform(parsed)
        return _mixed(rows_in(parsed, kind, members), read, parsed.rows), names

    listed = sorted(members)
    shown = ", ".join(listed[:SHOWN]) + (", …" if len(listed) > SHOWN else "")
    where = f"on {len(listed)} of {total} {kind} ({shown})" if said else ""
    return replace(reading, transform=transform, only=tuple(listed), part=where)
