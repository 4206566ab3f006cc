"""What a reader returns: the dataset, and what a dataset paired with it may need from it."""

from __future__ import annotations

import msgspec

from handler.boxes import Dataset
from handler.datasets.ids import DatasetIds


class Loaded(msgspec.Struct, frozen=True):
    """A dataset and what a paired dataset may need from it.

    `ids` are the file's own image and class ids, by which a paired file may name them (a
    COCO results list names its GT's COCO ids); `class_order` is the class list the dataset
    declares (native `classes`, COCO categories, YOLO names), into which a prediction
    cache's probability vectors index.
    """

    dataset: Dataset
    ids: DatasetIds | None = None
    class_order: list[str] | None = None


class DatasetNames(msgspec.Struct, frozen=True):
    """Where a dataset came from, in which format it was read, and how (each part of the reading
    with where it came from: the format's, detected, given)."""

    source: str
    format: str
    read_as: tuple[str, ...] = ()
    id_join: str | None = None  # image ids joined by another key (`Dataset.id_join`)
    masks: bool = False  # every object has an instance mask, kept to be scored (`BoxTable.has_masks`)
