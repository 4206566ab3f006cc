"""Every GT box's outcome and the prediction it matched, for compare's box transitions: which GT
box each of two prediction sets leaves correct, shifted, class-confused or missed (compare only:
a node run does not pay for it)."""

from __future__ import annotations

from typing import Any, Final

import msgspec
import numpy as np
import numpy.typing as npt

from handler.boxes import FloatArray, IntArray, gathered
from handler.engine.evaluation import Evaluation
from handler.engine.plugin import Analysis, ShardContext


class GtBoxes(msgspec.Struct, frozen=True):
    """GT boxes with their outcome under one run; `image` indexes `asset_ids`, the classes
    `class_names`; the matched prediction's columns are -1 / NaN for a missed box."""

    asset_ids: tuple[str, ...]
    class_names: tuple[str, ...]
    image: IntArray
    source_index: IntArray  # the box's position in the GT dataset
    class_id: IntArray
    outcome: IntArray  # Outcome codes
    iou: FloatArray
    pred_index: IntArray  # the matched prediction's position in its dataset
    pred_class: IntArray
    confidence: FloatArray

    def __len__(self) -> int:
        return len(self.image)


def _shard(evaluation: Evaluation, context: ShardContext) -> GtOutcomesByShard:
    gt, pred, outcomes = evaluation.gt, evaluation.pred, evaluation.outcomes
    matched = outcomes.match.gt_match
    boxes = GtBoxes(
        context.asset_ids,
        context.class_names,
        gt.image,
        gt.source_index,
        gt.class_id,
        outcomes.gt_outcome,
        gathered(outcomes.match.pred_iou, matched, np.nan),
        gathered(pred.source_index, matched, -1).astype(np.int64),
        gathered(pred.class_id, matched, -1).astype(np.int64),
        gathered(pred.confidence, matched, np.nan),
    )
    return GtOutcomesByShard(((context.shard, boxes),))


def _joined_names(blocks: list[tuple[str, ...]]) -> tuple[tuple[str, ...], list[IntArray]]:
    """One list of names (first seen first) and each block's names as indices into it."""
    index: dict[str, int] = {}
    remaps = [np.array([index.setdefault(name, len(index)) for name in names] or [-1]) for names in blocks]
    return tuple(index), remaps


def _cat(values: list[npt.NDArray[Any]], dtype: type = np.int64) -> Any:
    return np.concatenate(values).astype(dtype) if values else np.empty(0, dtype=dtype)


class GtOutcomesByShard(msgspec.Struct, frozen=True):
    """Every shard's GT boxes, by shard (= asset order)."""

    blocks: tuple[tuple[int, GtBoxes], ...]

    def __add__(self, other: GtOutcomesByShard) -> GtOutcomesByShard:
        return GtOutcomesByShard(tuple(sorted((*self.blocks, *other.blocks), key=lambda block: block[0])))

    def joined(self) -> GtBoxes:
        """Every GT box of the run as one table over its assets and classes."""
        parts = [boxes for _, boxes in self.blocks]
        asset_ids = tuple(asset for boxes in parts for asset in boxes.asset_ids)
        class_names, remaps = _joined_names([boxes.class_names for boxes in parts])
        firsts = np.cumsum([0, *(len(boxes.asset_ids) for boxes in parts)])

        def cat(column: str, dtype: type = np.int64) -> Any:
            return _cat([getattr(boxes, column) for boxes in parts], dtype)

        def classes(column: str) -> Any:
            return _cat([gathered(m, getattr(b, column), -1) for b, m in zip(parts, remaps, strict=True)])

        return GtBoxes(
            asset_ids,
            class_names,
            _cat([boxes.image + first for boxes, first in zip(parts, firsts.tolist(), strict=False)]),
            cat("source_index"),
            classes("class_id"),
            cat("outcome"),
            cat("iou", np.float64),
            cat("pred_index"),
            classes("pred_class"),
            cat("confidence", np.float64),
        )


def _value(found: GtOutcomesByShard) -> object:
    """Blocks and the boxes' order within a shard differ by split; the boxes, by image and position
    in the GT file, their names and outcomes do not."""
    boxes = found.joined()
    order = np.lexsort((boxes.source_index, boxes.image))
    names = np.array(boxes.class_names or ("",), dtype=object)
    return (
        [boxes.asset_ids[i] for i in boxes.image[order].tolist()],
        boxes.source_index[order].tolist(),
        names[boxes.class_id[order]].tolist(),
        boxes.outcome[order].tolist(),
        boxes.pred_index[order].tolist(),
    )


GT_OUTCOMES: Final = Analysis[GtOutcomesByShard]("gt_outcomes", _shard, GtOutcomesByShard.__add__, _value)
