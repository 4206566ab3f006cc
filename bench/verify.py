"""The engine's results on a whole workload against the pure-Python reference of the tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from msgspec.structs import replace

from handler.boxes import BoxTable
from handler.datasets import load_dataset, pair_datasets
from handler.engine import evaluate
from handler.inputs import DEFAULT_THRESHOLDS
from handler.storage.registry import open_source
from tests.helpers import reference as ref


@dataclass(frozen=True)
class Tables:
    gt: BoxTable
    pred: BoxTable
    n_images: int


def paired_tables(gt_path: str, results_path: str) -> Tables:
    """Both files read and paired as the node does."""
    gt = load_dataset(open_source(gt_path))
    pred = load_dataset(open_source(results_path), None, gt)
    paired = pair_datasets(gt.dataset, pred.dataset)
    return Tables(paired.gt, paired.pred, len(paired.asset_ids))


def _boxes_by_image(table: BoxTable, n_images: int) -> list[list[int]]:
    """Row numbers of each image, in table (input) order."""
    order = np.argsort(table.image, kind="stable")
    bounds = np.cumsum(np.bincount(table.image, minlength=n_images))
    return [part.tolist() for part in np.split(order, bounds[:-1])]


def _box(row: list[float]) -> ref.Box:
    return (row[0], row[1], row[2], row[3])


def reference_images(tables: Tables) -> list[ref.RefImage]:
    gt_rows = _boxes_by_image(tables.gt, tables.n_images)
    pred_rows = _boxes_by_image(tables.pred, tables.n_images)
    gt_xyxy, pred_xyxy = tables.gt.xyxy.tolist(), tables.pred.xyxy.tolist()
    gt_class, pred_class = tables.gt.class_id.tolist(), tables.pred.class_id.tolist()
    confidence = tables.pred.confidence.tolist()
    return [
        ref.RefImage(
            tuple(ref.GtBox(_box(gt_xyxy[r]), gt_class[r]) for r in g),
            tuple(ref.PredBox(_box(pred_xyxy[r]), pred_class[r], confidence[r]) for r in p),
        )
        for g, p in zip(gt_rows, pred_rows, strict=True)
    ]


def verify(gt_path: str, results_path: str, threshold: float, iou_min: float = 0.3) -> dict[str, Any]:
    """Counts, mean IoU, score and grade of the engine and of the reference, and whether they agree."""
    tables = paired_tables(gt_path, results_path)
    thresholds = replace(DEFAULT_THRESHOLDS, iou_min=iou_min, confidence_threshold=threshold)
    tally = evaluate(tables.gt, tables.pred, tables.n_images, thresholds).tally
    expected = ref.evaluate(reference_images(tables), threshold, iou_min, thresholds.iou_perfect)
    engine = {"counts": tally.count_dict(), "mean_iou": tally.mean_iou, "grade": tally.grade}
    wanted = {"counts": expected.counts, "mean_iou": expected.mean_iou, "grade": expected.grade}
    return {"equal": engine == wanted, "engine": engine, "reference": wanted}
