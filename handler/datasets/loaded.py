"""What a reader returns: the dataset, and what a dataset paired with it may need from it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from handler.boxes import Dataset

if TYPE_CHECKING:  # coco.py reads into a Loaded
    from handler.datasets.coco import CocoIds


@dataclass(frozen=True)
class Loaded:
    """A dataset and what a paired dataset may need from it.

    `coco_ids` lets a COCO results list name images and categories by COCO id;
    `class_order` is the class list the dataset declares (native `classes`, COCO
    categories, YOLO names), into which a prediction cache's probability vectors index.
    """

    dataset: Dataset
    coco_ids: CocoIds | None = None
    class_order: list[str] | None = None
