"""`outcomes.jsonl`: one JSON line per GT box and per kept prediction, for a review queue.

A matched pair gives two lines (one per box, `box` says which) that carry the same pair.
Lines are in asset order, GT boxes before predictions, each in dataset order. Built per
column, not per box: orjson writes each numeric column at once, text columns are looked up
from their few distinct encoded values, and one `bytes.join` interleaves the columns. Adjacent
text fields (and the key before a number) are looked up as one piece from a table of their
combinations, so a line is 9 pieces, not 23: the join is most of the cost.
"""

from __future__ import annotations

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
# Fused text pieces are looked up in one table of their combinations: at most this many entries.
MAX_TABLE: Final = 1 << 16


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
class _Lookup:
    """Encoded pieces of text: line i gets `table[index[i]]`; every line `table[0]` when no index."""

    table: Sequence[bytes]
    index: IntArray | None = None

    def then(self, other: _Lookup) -> _Lookup:
        """One lookup for both pieces, side by side: a table of every combination."""
        table = [first + second for first in self.table for second in other.table]
        if self.index is None or other.index is None:
            index = other.index if self.index is None else self.index * len(other.table)
        else:
            index = self.index * len(other.table) + other.index
        return _Lookup(table, index)


def _text_lookup(prefix: bytes, field: Text) -> _Lookup:
    table = [prefix + orjson.dumps(value) for value in field.values] + [prefix + b"null"]
    return _Lookup(table, np.where(field.index < 0, len(table) - 1, field.index))  # -1: null


Segment = _Lookup | Number


def _segments(fields: dict[str, Field]) -> list[Segment]:
    """The pieces of every line: text lookups fused while their table stays small, and numbers."""
    segments: list[Segment] = []
    text = _Lookup([b""])
    for position, (key, field) in enumerate(fields.items()):
        prefix = (b"," if position else b"{") + orjson.dumps(key) + b":"
        if isinstance(field, Number):
            segments += [text.then(_Lookup([prefix])), field]
            text = _Lookup([b""])
            continue
        piece = _text_lookup(prefix, field)
        if len(text.table) * len(piece.table) <= MAX_TABLE:
            text = text.then(piece)
        else:
            segments.append(text)
            text = piece
    return [*segments, text.then(_Lookup([b"}\n"]))]


def _column(segment: Segment, rows: IntArray) -> ObjectArray | bytes:
    """One segment's piece of each line in `rows`."""
    if isinstance(segment, _Lookup):
        if segment.index is None:
            return segment.table[0]
        return _objects(segment.table)[segment.index[rows]]
    values = np.ascontiguousarray(segment.values[rows])
    encoded = orjson.dumps(values, option=orjson.OPT_SERIALIZE_NUMPY)
    column = _objects(encoded[1:-1].split(b",") if len(values) else [])
    if segment.null is not None:
        column[segment.null[rows]] = b"null"
    return column


def json_lines(fields: dict[str, Field], n_lines: int, order: IntArray | None = None) -> bytes:
    """One JSON object per line with these keys in this order, without a loop per line.

    Lines go in `order` (default: as given), CHUNK_LINES at a time.
    """
    segments = _segments(fields)
    order = np.arange(n_lines) if order is None else order
    chunks = []
    for start in range(0, len(order), CHUNK_LINES):
        rows = order[start : start + CHUNK_LINES]
        grid = np.empty((len(rows), len(segments)), dtype=object)
        for column, segment in enumerate(segments):
            grid[:, column] = _column(segment, rows)
        chunks.append(b"".join(grid.ravel().tolist()))
    return b"".join(chunks)


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
    """The `outcomes.jsonl` part: n_gt + n_kept lines, encoded a chunk of lines at a time."""
    columns = _line_columns(evaluation, suspects)
    order = np.lexsort((np.arange(len(columns["side"])), columns["side"], columns["image"]))
    return json_lines(_fields(columns, asset_ids, class_names), len(order), order)
