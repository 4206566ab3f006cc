"""Another reading of the predictions' parsed rows (issue 24): what it is, and what it is made from.

A reading re-interprets the rows a reader parsed (the four numbers of a box, the frame they are
in, the class ids) without reading the file again: pure numpy over `ParsedRows`, so the engine
can score it exactly as it scored the rows as read, and an option applies the same function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import numpy as np

from handler.boxes import UNKNOWN_CLASS, Dataset, FloatArray, IntArray, Parsed, ParsedRows
from handler.engine.analyses.confusions import CONFUSIONS
from handler.engine.analyses.per_class import PER_CLASS
from handler.engine.counts import OutcomeCounts
from handler.engine.outcomes import Outcome
from handler.engine.state import EvaluationState

Transform = Callable[[Parsed], tuple[ParsedRows, list[str]]]
# Rows looked at to generate candidates: enough for a share or a quantile, cheap at any size.
SAMPLE_ROWS: Final = 20_000


@dataclass(frozen=True)
class Reading:
    """One way to read the rows: `key` is the read option that applies it, with `value`."""

    family: str
    key: str  # PRED_BOX, PRED_FRAME, PRED_CLASS_MAP
    value: str  # the option's value ("x1 y1 x2 y2", "letterbox 640", a class map file's name)
    says: str  # what it means, in words ("boxes written as [x1, y1, x2, y2]")
    transform: Transform
    class_map: tuple[tuple[str, str], ...] = ()  # (class as written, GT class): a class reading's file


@dataclass(frozen=True)
class Evidence:
    """What the candidates are generated from: the predictions' rows, the GT, the run as read."""

    parsed: Parsed
    gt: Dataset
    gt_ids: dict[int, str] | None  # the GT's own numeric class ids (a COCO file's category ids)
    state: EvaluationState

    def sample(self) -> ParsedRows:
        """Up to SAMPLE_ROWS rows, evenly spread (not a random draw: the same every run)."""
        rows = self.parsed.rows
        if len(rows) <= SAMPLE_ROWS:
            return rows
        keep = np.zeros(len(rows), dtype=bool)
        keep[np.linspace(0, len(rows) - 1, SAMPLE_ROWS).astype(np.int64)] = True
        return rows.subset(keep)

    def matched_matrix(self) -> tuple[tuple[str, ...], IntArray]:
        """(n, n) class-agnostic matches by (GT class, predicted class), over the merged class names."""
        per_class, confusions = self.state.of(PER_CLASS), self.state.of(CONFUSIONS)
        names = per_class.names
        index = {name: i for i, name in enumerate(names)}
        matrix = np.zeros((len(names), len(names)), dtype=np.int64)
        rows = np.array([index[name] for name in confusions.names], dtype=np.int64).reshape(-1)
        pairs = confusions.pairs
        if len(pairs):
            np.add.at(matrix, (rows[pairs[:, 0]], rows[pairs[:, 1]]), pairs[:, 2])
        diagonal = per_class.counts[:, Outcome.CORRECT] + per_class.counts[:, Outcome.SHIFTED]
        matrix[np.arange(len(names)), np.arange(len(names))] += diagonal
        return names, matrix


def written_numbers(rows: ParsedRows) -> FloatArray:
    """The four numbers each row wrote, undoing the convention its reader turned into corners."""
    x0, y0, x1, y1 = rows.xyxy.T
    with np.errstate(invalid="ignore", over="ignore"):
        if rows.convention == "x y w h":
            return np.stack((x0, y0, x1 - x0, y1 - y0), axis=1)
        if rows.convention == "cx cy w h":
            return np.stack(((x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0), axis=1)
    return rows.xyxy


def pixel_frame(rows: ParsedRows) -> bool:
    """The rows were read as pixels (no row flagged normalised)."""
    return rows.normalized is None or not bool(rows.normalized.any())


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


# Boxes are placed badly when fewer well-placed matches (IoU >= IOU_PERFECT, any class) than this
# share of the smaller side: a detector of these images in their frame places most of its boxes.
PLACED_SHARE_MIN: Final = 0.5
# Classes look mixed up from this share of class-confused matches (a real detector confuses
# 5-20 % by itself: those are re-scored too, and the mapping they suggest is the identity).
CONFUSED_SHARE_MIN: Final = 0.1


def boxes_misplaced(state: EvaluationState) -> bool:
    """The cheap pre-check of the box and frame readings: few boxes land well."""
    counts = state.tally.counts
    placed = int(counts[Outcome.CORRECT] + counts[Outcome.CLASS_CONFUSED])
    gt = int(OutcomeCounts(counts).gt_boxes)
    kept = int(counts.sum() - counts[Outcome.FALSE_NEGATIVE])
    return min(gt, kept) > 0 and _share(placed, min(gt, kept)) < PLACED_SHARE_MIN


def classes_mixed(state: EvaluationState) -> bool:
    """The cheap pre-check of the class readings: many confused matches, or ids naming no class."""
    counts, health = state.tally.counts, state.health
    matched = int(counts[Outcome.CORRECT] + counts[Outcome.SHIFTED] + counts[Outcome.CLASS_CONFUSED])
    confused = _share(int(counts[Outcome.CLASS_CONFUSED]), matched) >= CONFUSED_SHARE_MIN
    unknown = health.pred_skip_reasons.get(UNKNOWN_CLASS, 0) > 0
    return confused or unknown or any(name not in health.class_gt for name in health.class_kept)


@dataclass(frozen=True)
class Family:
    """One kind of export mistake: its option, its pre-check and its candidate readings."""

    name: str
    key: str
    suspect: Callable[[EvaluationState], bool]
    candidates: Callable[[Evidence], list[Reading]]
