"""Other readings of the predictions in a run (issue 24): the ones given as options, applied to the
rows read, and the one the re-scoring finds clearly better after the main evaluation."""

from __future__ import annotations

from dataclasses import dataclass, replace

from handler.boxes import Dataset
from handler.datasets.ids import DatasetIds
from handler.datasets.read_options import option_label
from handler.engine.evaluation import Thresholds
from handler.engine.readings import FAMILIES, Evidence, Reading, boxes, classes, frames
from handler.engine.readings.verdict import Rescored
from handler.engine.state import EvaluationState
from handler.errors import InputError, StorageError, quoted
from handler.execution.rescore import best_reading, read_with
from handler.inputs import NodeInputs
from handler.storage import open_source


def _class_map(reference: str) -> Reading:
    key = "PRED_CLASS_MAP"
    try:
        content = open_source(reference).read_bytes()
    except (StorageError, OSError) as error:
        raise InputError(f"{option_label(key)}: {quoted(reference)}: cannot read it ({error})") from None
    try:
        return classes.reading(classes.parse_class_map(reference, content))
    except ValueError as error:
        raise InputError(f"{option_label(key)}: {error}") from None


def given_readings(inputs: NodeInputs) -> list[Reading]:
    """The readings the options name, in the order they apply: box, frame, classes."""
    found = [boxes.reading(inputs.pred_box)] if inputs.pred_box else []
    found += [frames.reading(inputs.pred_frame)] if inputs.pred_frame else []
    return found + ([_class_map(inputs.pred_class_map)] if inputs.pred_class_map else [])


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
