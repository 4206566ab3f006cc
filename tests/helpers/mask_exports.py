"""A report scored on masks for the export tests (the real COCO val2014 pair: cocoapi's own mask
results against the GT's polygons), and pycocotools' measure of the masks an export gives back
against the masks the results file wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from pycocotools import mask as coco_mask

from handler.boxes import MaskRuns
from handler.datasets import PairedBoxes
from handler.engine.masks import made
from handler.kernels.run_store import merged
from helpers.paths import THIRD_PARTY
from helpers.pre_labels import Report, in_order, kept_predictions, stored_report

COCO = THIRD_PARTY / "coco_val2014_100"
GT_FILE = COCO / "instances_val2014_100.json"
RESULTS = COCO / "instances_val2014_fakesegm100_results.json"
# The pre-labels the recommendation keeps of it (every mask result: 0.5 keeps them all).
KEPT = 734


def masked_report(store: Path) -> Report:
    found = stored_report(store, GT_FILE, RESULTS)
    assert found.findings["time"]["shape"] == "masks"
    return found


def results_segmentation() -> list[dict[str, Any]]:
    """Each result's `segmentation` (compressed RLE), in the file's order."""
    return [result["segmentation"] for result in json.loads(RESULTS.read_text())]


def coco_rle(masks: MaskRuns, row: int) -> dict[str, Any]:
    """One of our masks as pycocotools' own compressed RLE (its runs merged as pycocotools writes
    them: given a mask's long runs in pieces, empty runs between them, its `iou` finds no overlap
    with the same mask)."""
    height, width = int(masks.height[row]), int(masks.width[row])
    first, last = int(masks.offsets[row]), int(masks.offsets[row + 1])
    runs = merged(masks.counts[first:last], np.array([0, last - first]))[0].tolist()
    rle: dict[str, Any] = coco_mask.frPyObjects({"size": [height, width], "counts": runs}, height, width)
    return rle


def source_rows(report: Report) -> tuple[list[tuple[str, str, float]], list[int]]:
    """The pre-labels the recommendation keeps, as `in_order` sorts them, and each one's place in
    the results file."""
    wanted = kept_predictions(report, "recommended")
    keys, order = in_order(wanted)
    return keys, wanted.pred.source_index[order].tolist()


def ious_with_the_file(back: PairedBoxes, report: Report) -> np.ndarray[Any, np.dtype[np.float64]]:
    """pycocotools' IoU of each pre-label read back with its prediction's RLE in the results file
    (a mask equal to it: also the same area)."""
    segmentation = results_segmentation()
    wanted_keys, sources = source_rows(report)
    back_keys, back_order = in_order(back)
    assert back_keys == wanted_keys
    assert back.pred.masks is not None
    masks = made(back.pred.masks)
    ious = []
    for back_row, source in zip(back_order, sources, strict=True):
        mine = coco_rle(masks, back_row)
        ious.append(coco_mask.iou([mine], [segmentation[source]], [0])[0][0])
        if ious[-1] == 1.0:
            assert coco_mask.area(mine) == coco_mask.area(segmentation[source])
    return np.array(ious)
