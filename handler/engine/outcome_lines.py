"""`outcomes.jsonl`: one JSON line per GT box and per kept prediction, for a review queue.

A matched pair gives two lines (one per box, `box` says which) that carry the same pair.
Lines are in asset order, GT boxes before predictions, each in dataset order. Built per
column, not per box: orjson writes each numeric column at once, text columns are looked up
from their few distinct encoded values, and one `bytes.join` interleaves the columns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import orjson

from handler.boxes import FloatArray, IntArray
from handler.engine.evaluation import Evaluation
from handler.engine.gt_errors import KINDS, NOT_SUSPECTED
from handler.engine.outcomes import Outcome

ObjectArray = npt.NDArray[np.object_]
SIDES: Final = ("gt", "pred")
# Lines encoded at once: the per-line objects of a chunk are all that is held (measured on
# the 5k-image workload: +27 MB at 20k lines vs +122 MB at 100k, at the same speed).
CHUNK_LINES: Final = 20_000
# Adjacent text fields whose tables have at most this many pairs of entries are one piece of a
# line (both classes; the outcome, its action and the suspicion): fewer, longer pieces to join.
TABLE_ENTRIES: Final = 1 << 16
LINE_END: Final = b"}\n"


@dataclass(frozen=True)
class Text:
    """A text field: `values[index]`, null where index is -1."""

    values: Sequence[str]
    index: IntArray


@dataclass(frozen=True)
class Number:
    """A numeric field: null where `null` is set (NaN floats are null anyway)."""

    values: IntArray | FloatArray
    null: npt.NDArray[np.bool_] | None = None


Field = Text | Number


def _objects(items: Sequence[bytes]) -> ObjectArray:
    array = np.empty(len(items), dtype=object)
    array[:] = items
    return array


@dataclass(frozen=True)
class _Encoded:
    """Text fields as a table of their `"key":value` pieces, encoded once for every chunk, and the
    entry of each line."""

    table: ObjectArray
    index: IntArray

    @classmethod
    def of(cls, prefix: bytes, field: Text) -> _Encoded:
        pieces = [prefix + orjson.dumps(value) for value in field.values] + [prefix + b"null"]
        return cls(_objects(pieces), field.index % len(pieces))  # index -1 is the last entry: null

    def then(self, other: _Encoded) -> _Encoded:
        """This field and the next as one: a table of every pair of their entries."""
        return _Encoded(
            np.add.outer(self.table, other.table).ravel(), self.index * len(other.table) + other.index
        )

    def closed(self) -> _Encoded:
        """The last field, with the line's end in every entry."""
        return _Encoded(_objects([entry + LINE_END for entry in self.table.tolist()]), self.index)


Part = _Encoded | tuple[bytes, Number]


def number_texts(values: IntArray | FloatArray, prefix: bytes = b"") -> ObjectArray:
    """`prefix` and the JSON text of each value: orjson writes the values at once, and the prefix
    goes before each one by turning every separating comma into a newline (no number holds one)
    and the prefix. NaN is `null`."""
    if not len(values):
        return _objects([])
    encoded = orjson.dumps(np.ascontiguousarray(values), option=orjson.OPT_SERIALIZE_NUMPY)[1:-1]
    return _objects((prefix + encoded.replace(b",", b"\n" + prefix)).split(b"\n"))


def _number_column(prefix: bytes, field: Number, lines: IntArray) -> ObjectArray:
    """`"key":value` of each line (`number_texts`)."""
    column = number_texts(field.values[lines], prefix)
    if field.null is not None:
        column[field.null[lines]] = prefix + b"null"
    return column


def _chunk_lines(parts: list[Part], end: bytes, lines: IntArray) -> bytes:
    """The lines `lines` (indices into the fields' columns), in that order: one piece per part."""
    pieces: list[ObjectArray | bytes] = [
        part.table[part.index[lines]] if isinstance(part, _Encoded) else _number_column(*part, lines)
        for part in parts
    ]
    if end:
        pieces.append(end)
    grid = np.empty((len(lines), len(pieces)), dtype=object)
    for column, piece in enumerate(pieces):
        grid[:, column] = piece
    return b"".join(grid.ravel().tolist())


def _parts(fields: dict[str, Field]) -> list[Part]:
    """A part per field, but adjacent text fields with small tables as one (fewer pieces to join)."""
    parts: list[Part] = []
    for position, (key, field) in enumerate(fields.items()):
        prefix = (b"," if position else b"{") + orjson.dumps(key) + b":"
        part = _Encoded.of(prefix, field) if isinstance(field, Text) else (prefix, field)
        last = parts[-1] if parts else None
        if (
            isinstance(part, _Encoded)
            and isinstance(last, _Encoded)
            and len(last.table) * len(part.table) <= TABLE_ENTRIES
        ):
            parts[-1] = last.then(part)
        else:
            parts.append(part)
    return parts


def json_lines(fields: dict[str, Field], order: IntArray) -> bytes:
    """One JSON object per line with these keys in this order, the lines of `order` (indices into
    the fields' columns) in that order; without a loop per line, CHUNK_LINES lines at a time."""
    parts = _parts(fields)
    end = LINE_END
    if parts and isinstance(parts[-1], _Encoded):
        parts[-1], end = parts[-1].closed(), b""
    return b"".join(
        _chunk_lines(parts, end, order[start : start + CHUNK_LINES])
        for start in range(0, len(order), CHUNK_LINES)
    )


def _partner(values: Any, partner: IntArray, fill: Any) -> Any:
    """values[partner], `fill` where there is no partner (-1)."""
    gathered = np.asarray(values)[np.maximum(partner, 0)] if len(values) else np.full(len(partner), fill)
    return np.where(partner >= 0, gathered, fill)


def _line_columns(evaluation: Evaluation, suspects: IntArray) -> dict[str, Any]:
    """Every column for the GT lines followed by the prediction lines, unordered.

    `suspects` (per kept prediction, `gt_errors.suspect_kinds`) flags both lines of a pair.
    """
    gt, pred, outcomes = evaluation.gt, evaluation.pred, evaluation.outcomes
    match = outcomes.match
    gt_partner, pred_partner = match.gt_match, match.pred_match
    iou_of_gt = _partner(match.pred_iou, gt_partner, np.nan)
    return {
        "image": np.concatenate((gt.image, pred.image)),
        "side": np.repeat([0, 1], [len(gt), len(pred)]),
        "gt_index": np.concatenate((gt.source_index, _partner(gt.source_index, pred_partner, -1))),
        "pred_index": np.concatenate((_partner(pred.source_index, gt_partner, -1), pred.source_index)),
        "gt_class": np.concatenate((gt.class_id, _partner(gt.class_id, pred_partner, -1))),
        "pred_class": np.concatenate((_partner(pred.class_id, gt_partner, -1), pred.class_id)),
        "iou": np.concatenate((iou_of_gt, match.pred_iou)),
        "confidence": np.concatenate((_partner(pred.confidence, gt_partner, np.nan), pred.confidence)),
        "outcome": np.concatenate((outcomes.gt_outcome, outcomes.pred_outcome)),
        "suspect": np.concatenate((_partner(suspects, gt_partner, NOT_SUSPECTED), suspects)),
    }


def _fields(
    columns: dict[str, Any], asset_ids: Sequence[str], class_names: Sequence[str]
) -> dict[str, Field]:
    c = columns
    return {
        "asset_id": Text(asset_ids, c["image"]),
        "box": Text(SIDES, c["side"]),
        "gt_index": Number(c["gt_index"], c["gt_index"] < 0),
        "pred_index": Number(c["pred_index"], c["pred_index"] < 0),
        "gt_class": Text(class_names, c["gt_class"]),
        "pred_class": Text(class_names, c["pred_class"]),
        "iou": Number(c["iou"]),
        "confidence": Number(c["confidence"]),
        "outcome": Text([o.key for o in Outcome], c["outcome"]),  # outcome codes index Outcome
        "action": Text([o.action for o in Outcome], c["outcome"]),
        "suspected_gt_error": Text(KINDS, c["suspect"]),
    }


def outcome_lines(
    evaluation: Evaluation, asset_ids: Sequence[str], class_names: Sequence[str], suspects: IntArray
) -> bytes:
    """The `outcomes.jsonl` part: n_gt + n_kept lines, in asset order, GT before predictions."""
    columns = _line_columns(evaluation, suspects)
    order = np.lexsort((np.arange(len(columns["side"])), columns["side"], columns["image"]))
    return json_lines(_fields(columns, asset_ids, class_names), order)


_SUSPECT_FLAG: Final = re.compile(rb'"suspected_gt_error":"[a-z_]+"')


def without_suspects(content: bytes) -> bytes:
    """Outcome lines with no box flagged as a suspected GT error (a mix-up explains them)."""
    return _SUSPECT_FLAG.sub(b'"suspected_gt_error":null', content)
