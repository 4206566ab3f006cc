"""`ledger/*.npz`: the per-box ledger, one row per outcome, as columns a shard writes.

A row is a matched pair (correct, shifted, class-confused), a GT box no kept prediction matched
(false negative) or a kept prediction that matched none (false positive): n_gt + n_fp rows, in
asset order, each image's GT rows (in dataset order) before its false positives. Rows carry both
boxes, so a reader can draw or filter them without the input files (docs/report.md, "The ledger",
says what each column holds and how `prelabel-eval show --outcomes` prints them).

Each chunk is an uncompressed `.npz` (`npz_chunks`): per shard `version`, `asset_ids` and
`class_names` (JSON bytes); per row `image` (into the chunk's assets), `gt_index`, `pred_index`
(the boxes' positions in their datasets, -1 for none), `gt_class`, `pred_class` (into the chunk's
classes, -1), `gt_xywh`, `pred_xywh` (float32 left, top, width, height, NaN for none; pixels where
the image's size is known, else 0-1 fractions of a normalised dataset, and then `fractions` is
set), `iou`, `confidence` (float64, NaN for none), `outcome` (`Outcome` codes) and `suspect`
(`gt_errors.KINDS` index, -1); `gt_angle`, `pred_angle` (float32 degrees clockwise about the
centre) only when some box is turned, `fractions` only when some row is in fractions.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec
import numpy as np
import numpy.typing as npt

from handler.boxes import BoolArray, BoxTable, FloatArray, IntArray, gathered, rows_taken
from handler.engine.evaluation import Evaluation
from handler.engine.gt_errors import KINDS
from handler.engine.npz_chunks import Chunk, check_rows, loaded, names_column, names_of, saved
from handler.engine.outcomes import N_OUTCOMES
from handler.engine.pre_label_boxes import COORDINATES, ChunkImages

# The ledger's layout: a reader refuses a chunk of a later version by name instead of misreading it.
LEDGER_VERSION: Final = 1
INDEX: Final = np.int64
CODES: Final = np.int32
SMALL_CODES: Final = np.int8
# The columns with a row per outcome.
ROWS: Final = (
    "image",
    "gt_index",
    "pred_index",
    "gt_class",
    "pred_class",
    "gt_xywh",
    "pred_xywh",
    "iou",
    "confidence",
    "outcome",
    "suspect",
    "gt_angle",
    "pred_angle",
    "fractions",
)


def _xywh(boxes: BoxTable, rows: IntArray, scale: FloatArray | None) -> FloatArray:
    """float32 left, top, width, height of `rows` (-1: NaN), times each image's (w, h) if scaled."""
    # Width and height in place: a concatenation of strided halves copies slowly.
    xywh = rows_taken(boxes.xyxy, np.maximum(rows, 0)) if len(boxes) else np.full((len(rows), 4), np.nan)
    xywh[:, 2:] -= xywh[:, :2]
    if scale is not None:
        xywh = xywh * scale
    xywh[rows < 0] = np.nan
    stored: FloatArray = xywh.astype(COORDINATES)
    return stored


def _scale(images: ChunkImages, image: IntArray) -> tuple[FloatArray | None, BoolArray]:
    """Per row, what turns fractions into pixels (None: the boxes are pixels) and where it cannot."""
    if not images.normalized:
        return None, np.zeros(len(image), dtype=bool)
    widths, heights = images.widths[image], images.heights[image]
    unknown = ~(np.isfinite(widths) & np.isfinite(heights))
    factor = np.stack((widths, heights, widths, heights), axis=1)
    factor[unknown] = 1.0
    return factor, unknown


def ledger_chunk(evaluation: Evaluation, images: ChunkImages, suspects: IntArray) -> bytes:
    """The shard's ledger chunk; `suspects` per kept prediction (`gt_errors.suspect_kinds`)."""
    gt, pred, outcomes = evaluation.gt, evaluation.pred, evaluation.outcomes
    unmatched = np.flatnonzero(outcomes.match.pred_match < 0)
    image = np.concatenate((gt.image, pred.image[unmatched]))
    order = np.lexsort((np.arange(len(image)), image))  # GT rows come first within an image
    gt_row = np.concatenate((np.arange(len(gt)), np.full(len(unmatched), -1)))[order]
    pred_row = np.concatenate((outcomes.match.gt_match, unmatched))[order]
    image = image[order]
    scale, fractions = _scale(images, image)
    turned = bool(gt.angle.any() or pred.angle.any())
    angles = (
        {
            "gt_angle": gathered(gt.angle, gt_row, 0.0).astype(COORDINATES),
            "pred_angle": gathered(pred.angle, pred_row, 0.0).astype(COORDINATES),
        }
        if turned
        else {}
    )
    outcome = np.where(
        gt_row >= 0, gathered(outcomes.gt_outcome, gt_row, 0), gathered(outcomes.pred_outcome, pred_row, 0)
    )
    return saved(
        {
            "version": np.array(LEDGER_VERSION),
            "asset_ids": names_column(images.asset_ids),
            "class_names": names_column(images.class_names),
            "image": image.astype(CODES),
            "gt_index": gathered(gt.source_index, gt_row, -1).astype(INDEX),
            "pred_index": gathered(pred.source_index, pred_row, -1).astype(INDEX),
            "gt_class": gathered(gt.class_id, gt_row, -1).astype(CODES),
            "pred_class": gathered(pred.class_id, pred_row, -1).astype(CODES),
            "gt_xywh": _xywh(gt, gt_row, scale),
            "pred_xywh": _xywh(pred, pred_row, scale),
            "iou": gathered(outcomes.match.pred_iou, pred_row, np.nan).astype(np.float64),
            "confidence": gathered(pred.confidence, pred_row, np.nan).astype(np.float64),
            "outcome": outcome.astype(SMALL_CODES),
            "suspect": gathered(suspects, pred_row, -1).astype(SMALL_CODES),
            **angles,
            **({"fractions": fractions} if fractions.any() else {}),
        }
    )


class LedgerChunk(msgspec.Struct, frozen=True):
    """One chunk's columns as written (`ledger_chunk`), every optional column filled in."""

    asset_ids: list[str]
    class_names: list[str]
    columns: dict[str, npt.NDArray[Any]]

    def __len__(self) -> int:
        return len(self.columns["image"])


def _filled(chunk: Chunk) -> dict[str, npt.NDArray[Any]]:
    rows = len(chunk["image"])
    zeros = np.zeros(rows, dtype=COORDINATES)
    columns = {
        key: value for key, value in chunk.items() if value.ndim and key not in ("asset_ids", "class_names")
    }
    columns.setdefault("gt_angle", zeros)
    columns.setdefault("pred_angle", zeros)
    columns.setdefault("fractions", np.zeros(rows, dtype=bool))
    return columns


def read_ledger_chunk(content: bytes) -> LedgerChunk:
    """A stored chunk; ValueError when it is damaged or of a later layout."""
    chunk = loaded(content)
    try:
        version = int(chunk["version"])
    except (KeyError, TypeError, ValueError):
        raise ValueError("damaged chunk (no layout version: not a ledger chunk)") from None
    if version != LEDGER_VERSION:
        raise ValueError(f"ledger layout {version} (this version reads {LEDGER_VERSION})")
    try:
        assets, classes = names_of(chunk, "asset_ids"), names_of(chunk, "class_names")
        bounds = {"image": len(assets), "gt_class": len(classes), "pred_class": len(classes)}
        check_rows(chunk, ROWS, {**bounds, "outcome": N_OUTCOMES, "suspect": len(KINDS)})
        return LedgerChunk(assets, classes, _filled(chunk))
    except (KeyError, ValueError) as error:
        raise ValueError(f"damaged chunk ({error})") from error
