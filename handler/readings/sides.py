"""Other readings of both sides in a run: the ones given as options, applied to the rows loaded,
and the one the search finds clearly better after the main evaluation (`rescore`)."""

from __future__ import annotations

from collections.abc import Callable

import msgspec
import numpy as np
from msgspec.structs import replace

from handler.boxes import WRITTEN_SHAPES, WROTE_BOX, Dataset, ParsedRows
from handler.datasets.ids import DatasetIds
from handler.datasets.loaded import DatasetNames, Loaded
from handler.datasets.pairing import ScoreOn, unscored_masks_left_out, with_shapes
from handler.datasets.read_options import ReadOptions, option_label
from handler.engine.evaluation import Thresholds
from handler.engine.state import EvaluationState
from handler.errors import InputError
from handler.readings import Reading, boxes, classes, frames, masks, scores
from handler.readings.rescore import Sides, best_reading, read_with
from handler.readings.verdict import Rescored


def _parsed_option(key: str, read: Callable[[str], Reading], text: str) -> Reading:
    try:
        return read(text)
    except ValueError as error:
        raise InputError(f"{option_label(key)}: {error}") from None


def given_readings(options: ReadOptions) -> list[Reading]:
    """The readings a side's options name, in the order they apply: box, frame, score, mask, classes."""
    side = options.side
    found = []
    if options.box:
        found.append(_parsed_option(f"{side.upper()}_BOX", lambda v: boxes.reading(v, side), options.box))
    if options.frame:
        found.append(
            _parsed_option(f"{side.upper()}_FRAME", lambda v: frames.reading(v, side), options.frame)
        )
    if options.score:
        found.append(
            _parsed_option(f"{side.upper()}_SCORE", lambda v: scores.reading(v, side), options.score)
        )
    if options.mask:
        found.append(_parsed_option(f"{side.upper()}_MASK", lambda v: masks.reading(v, side), options.mask))
    return found + ([classes.reading(options.class_map)] if options.class_map else [])


def read_again(dataset: Dataset, readings: list[Reading]) -> Dataset:
    """The dataset built again from its rows read each way in turn (itself when none is given)."""
    if not readings:
        return dataset
    parsed = dataset.parsed
    if parsed is None:
        raise InputError(
            f"{option_label(readings[0].key)}: {dataset.format} datasets cannot be read another way"
        )
    # A box convention given says how the lines' numbers are read: their layout note is moot.
    note = None if any(reading.family == "box" for reading in readings) else dataset.layout_note
    return replace(
        read_with(tuple(readings), parsed), layout_note=note, unlabelled_images=dataset.unlabelled_images
    )


def read_as(dataset: Dataset, options: ReadOptions) -> DatasetNames:
    """How a side was read, part by part, each with where it came from: the format's way, what the
    node detected in the data, or an option given."""
    rows = dataset.parsed.rows if dataset.parsed is not None else None
    parts = [dataset.format, *_shape_parts(rows, options)]
    if dataset.boxes.has_masks:
        parts.append("instance masks (the format's)")
    turned = int(np.count_nonzero(dataset.boxes.turned))
    if turned:
        parts.append(f"{turned} of {len(dataset.boxes)} boxes rotated (the format's)")
    if options.frame:
        parts.append(f"frame: {options.frame} (given)")
    else:
        parts.append("normalised to 0-1 (detected)" if dataset.normalized else "pixels")
    if options.score:
        parts.append(f"confidences out of {options.score.split()[-1]} (given)")
    if options.class_map:
        parts.append("classes by the class map (given)")
    elif options.names is not None:
        parts.append("class names from the names file (given)")
    parts.append(
        f"images joined by {dataset.id_join} (detected)" if dataset.id_join else "images joined by id"
    )
    if dataset.unlabelled_images:
        parts.append(
            f"{dataset.unlabelled_images} GT images without a label file read as images with no boxes "
            "(the format's tool writes none for them)"
        )
    return DatasetNames(
        dataset.source, dataset.format, tuple(parts), dataset.id_join, dataset.boxes.has_masks
    )


def _shape_parts(rows: ParsedRows | None, options: ReadOptions) -> list[str]:
    """How the rows' objects were written: boxes in a convention, or polygons and masks whose
    boxes are their extents (a format that writes no box has no box convention to name)."""
    wrote = rows.wrote if rows is not None else None
    shapes = np.unique(wrote[wrote != WROTE_BOX]).tolist() if wrote is not None else []
    parts = []
    if options.box:
        parts.append(f"boxes as {options.box} (given)")
    elif rows is not None and (wrote is None or (wrote == WROTE_BOX).any()):
        parts.append(f"boxes as {rows.convention} (the format's)")
    if shapes:
        assert wrote is not None  # shapes come from it
        names = " and ".join(WRITTEN_SHAPES[shape] for shape in shapes)
        shaped = int(np.count_nonzero(wrote != WROTE_BOX))
        some = "" if shaped == len(wrote) else f"{shaped} of {len(wrote)} objects as "
        parts.append(f"{some}{names}, each box its shape's extent (the format's: it writes no box for them)")
    return parts


def numeric_ids(ids: DatasetIds | None, names: list[str]) -> dict[int, str] | None:
    """The GT's own class ids when they are numbers (a COCO file's category ids)."""
    if ids is None or not all(text.lstrip("-").isdigit() for text in ids.class_ids):
        return None
    return {int(text): name for text, name in zip(ids.class_ids, names, strict=False)}


class ReadSides(msgspec.Struct, frozen=True):
    """The two datasets as the run read them, kept for the search of other readings, and how."""

    sides: Sides
    gt_names: DatasetNames
    pred_names: DatasetNames

    @property
    def gt(self) -> Dataset:
        return self.sides.gt

    @property
    def pred(self) -> Dataset:
        return self.sides.pred

    def best_reading(self, state: EvaluationState, thresholds: Thresholds) -> Rescored | None:
        return best_reading(self.sides, state, thresholds)


def read_sides(
    gt_read: Loaded, gt_options: ReadOptions, pred_read: Loaded, pred_options: ReadOptions, score_on: ScoreOn
) -> ReadSides:
    """Both sides as loaded (the predictions against the GT), each read again as its options say,
    their masks kept or not as SCORE_ON says (`with_shapes`)."""
    gt_dataset, pred_dataset = with_shapes(
        read_again(gt_read.dataset, given_readings(gt_options)),
        read_again(pred_read.dataset, given_readings(pred_options)),
        score_on,
    )
    gt_names, pred_names = read_as(gt_dataset, gt_options), read_as(pred_dataset, pred_options)
    gt_dataset, pred_dataset = unscored_masks_left_out(gt_dataset, pred_dataset, score_on)
    sides = Sides(gt_dataset, pred_dataset, numeric_ids(gt_read.ids, gt_dataset.class_names))
    return ReadSides(sides, gt_names, pred_names)
