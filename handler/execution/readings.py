"""Other readings of the predictions in a run (issue 24): the ones given as options, applied to the
rows read, and the one the re-scoring finds clearly better after the main evaluation."""

from __future__ import annotations

from dataclasses import dataclass, replace

from handler.boxes import Dataset
from handler.datasets.ids import DatasetIds
from handler.datasets.read_options import ReadOptions, option_label
from handler.datasets.side import OpenSide
from handler.engine.evaluation import Thresholds
from handler.engine.readings import FAMILIES, Evidence, Reading, boxes, classes, frames
from handler.engine.readings.verdict import Rescored
from handler.engine.state import EvaluationState
from handler.errors import InputError
from handler.execution.rescore import best_reading, read_with


def _frame(key: str, text: str) -> Reading:
    try:
        return frames.reading(text)
    except ValueError as error:
        raise InputError(f"{option_label(key)}: {error}") from None


def given_readings(options: ReadOptions) -> list[Reading]:
    """The readings a side's options name, in the order they apply: box, frame, classes."""
    side = options.side.upper()
    found = [boxes.reading(options.box)] if options.box else []
    found += [_frame(f"{side}_FRAME", options.frame)] if options.frame else []
    return found + ([classes.reading(options.class_map)] if options.class_map else [])


def read_again(dataset: Dataset, readings: list[Reading]) -> Dataset:
    """The dataset built again from its rows read each way in turn (itself when none is given)."""
    for reading in readings:
        parsed = dataset.parsed
        if parsed is None:
            raise InputError(
                f"{option_label(reading.key)}: {dataset.format} datasets cannot be read another way"
            )
        # A box convention given says how the lines' numbers are read: their layout note is moot.
        note = None if reading.family == "box" else dataset.layout_note
        dataset = replace(read_with(reading, parsed), layout_note=note)
    return dataset


def numeric_ids(ids: DatasetIds | None, names: list[str]) -> dict[int, str] | None:
    """The GT's own class ids when they are numbers (a COCO file's category ids)."""
    if ids is None or not all(text.lstrip("-").isdigit() for text in ids.class_ids):
        return None
    return {int(text): name for text, name in zip(ids.class_ids, names, strict=False)}


@dataclass(frozen=True)
class ReadSides:
    """The two datasets as the run read them, kept for the re-scoring of other readings."""

    gt: Dataset  # without its parsed rows
    pred: Dataset
    gt_ids: dict[int, str] | None

    def best_reading(self, state: EvaluationState, thresholds: Thresholds) -> Rescored | None:
        parsed = self.pred.parsed
        if parsed is None:
            return None
        evidence = Evidence(parsed, self.gt, self.gt_ids, state)
        return best_reading(evidence, self.pred, thresholds, FAMILIES)


def read_sides(gt: OpenSide, pred: OpenSide) -> ReadSides:
    """Both sides read (the predictions against the GT), each with the readings its options give."""
    gt_read, pred_read = gt.loaded, pred.loaded_against(gt)
    gt_dataset = replace(read_again(gt_read.dataset, given_readings(gt.options)), parsed=None)
    pred_dataset = read_again(pred_read.dataset, given_readings(pred.options))
    return ReadSides(gt_dataset, pred_dataset, numeric_ids(gt_read.ids, gt_dataset.class_names))
