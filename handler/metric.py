"""The Python API, in the style of mmeval's BaseMetric: `add` per batch, `compute`, `reset`.

>>> metric = PrelabelingEfficiency(iou_min=0.3, iou_perfect=0.8, confidence_threshold=0.5)
>>> metric.add(predictions=[{"bboxes": [[0, 0, 10, 10]], "labels": ["cat"], "scores": [0.9]}],
...            groundtruths=[{"bboxes": [[0, 0, 10, 10]], "labels": ["cat"]}])
>>> metric.compute().efficiency_level
'Production-grade'

State is a `Tally` of additive figures, so metrics that saw disjoint images merge exactly:
`PrelabelingEfficiency.merge(a, b)` equals one metric that saw both.

`load_records(gt_ref, pred_ref)` reads any dataset reference the node reads (a file, a folder,
an s3:// URI, a dataset id), with the node's read options (formats, class names files, column
layouts), into the records `add` takes; `metric.evaluate(gt_ref, pred_ref)` reads them the
same way (`open_side`, as the node) and evaluates the box tables statelessly.

`handler.mmeval.PrelabelingEfficiencyMetric` is the same metric as a real mmeval BaseMetric,
synced across processes (the optional `[mmeval]` extra); it shares `metric_thresholds` and
`evaluate_records` with this class.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict

from handler.boxes import BoxTable, FloatArray, MaskRuns
from handler.datasets import PairedBoxes, pair_datasets
from handler.datasets.side import SideSpec, open_side
from handler.engine import Evaluation, Tally, Thresholds, evaluate
from handler.engine.crowded import CROWDED_PROBLEM, crowded_images, off_images
from handler.engine.masks import extent, from_bitmaps
from handler.engine.timecost import TimeCosts
from handler.errors import quoted
from handler.execution.readings import read_sides
from handler.inputs import DEFAULT_THRESHOLDS, select_number
from handler.report.findings import Counts, Grade, Score, Shares, TimeSaved, time_saved
from handler.runtime import store_uri
from handler.storage import Store, open_store

ImageRecord = Mapping[str, Any]


class EfficiencyResult(BaseModel):
    """What `compute` returns: the score, the grade, the figures behind them and labeler time.

    The figures are the findings' own section models, so `to_dict` matches the report's keys.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    assistance_score: Score
    efficiency_level: Grade
    counts: Counts
    shares: Shares
    mean_iou: Score | None
    time: TimeSaved

    @classmethod
    def of(cls, tally: Tally, costs: TimeCosts) -> EfficiencyResult:
        return cls(
            assistance_score=tally.assistance_score,
            efficiency_level=cast(Grade, tally.grade),  # one of GRADES; the model checks it again
            counts=Counts.of(tally),
            shares=Shares.of(tally),
            mean_iou=tally.mean_iou,
            time=time_saved(tally, costs),
        )

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def __str__(self) -> str:
        outcomes = ", ".join(f"{name} {count}" for name, count in self.counts.outcomes().items())
        return f"{self.efficiency_level} (assistance score {self.assistance_score:.3f}): {outcomes}"


@dataclass(frozen=True)
class Records:
    """Two datasets as `add` takes them: one record per shared asset, in `asset_ids` order."""

    predictions: list[dict[str, Any]]
    groundtruths: list[dict[str, Any]]
    asset_ids: list[str]


def _per_image(boxes: BoxTable, class_names: Sequence[str], n_images: int) -> list[dict[str, Any]]:
    """Split a box table into per-image records (boxes sorted by image, then one split)."""
    order = np.argsort(boxes.image, kind="stable")
    cuts = np.searchsorted(boxes.image[order], np.arange(1, n_images))
    labels = np.asarray(class_names, dtype=object)[boxes.class_id[order]] if len(order) else np.empty(0)
    columns = zip(
        np.split(boxes.xyxy[order], cuts),
        np.split(labels, cuts),
        np.split(boxes.confidence[order], cuts),
        strict=True,
    )
    return [{"bboxes": xyxy, "labels": names.tolist(), "scores": scores} for xyxy, names, scores in columns]


def _read_paired(gt: SideSpec, pred: SideSpec, store: Store | None) -> PairedBoxes:
    """Two sides opened, read and paired as the node does."""
    store = store or open_store(store_uri(None))
    sides = read_sides(open_side(gt, store), open_side(pred, store))
    paired = pair_datasets(sides.gt, sides.pred)
    _warn_crowded([f"asset {quoted(image.asset_id)}" for image in paired.crowded])
    return paired


def _warn_crowded(images: list[str]) -> None:
    """What the node lists as skipped, said once by a Python caller's warning (none: nothing)."""
    if images:
        named = ", ".join(images[:3]) + (f" and {len(images) - 3} more" if len(images) > 3 else "")
        warnings.warn(f"{named}: its boxes are {CROWDED_PROBLEM}: skipped", UserWarning, stacklevel=3)


def load_records(
    gt_ref: str,
    pred_ref: str,
    *,
    store: Store | None = None,
    gt_format: str | None = None,
    pred_format: str | None = None,
    gt_names: str | None = None,
    pred_names: str | None = None,
    gt_layout: str | None = None,
    pred_layout: str | None = None,
    pred_box: str | None = None,
    pred_frame: str | None = None,
    pred_class_map: str | None = None,
) -> Records:
    """Read two dataset references as the node does (formats detected unless given) into records.

    `gt_names` / `pred_names` name a side's class ids (a .names/classes.txt list, a data.yaml,
    or a COCO file), `gt_layout` / `pred_layout` give the column order of its text label lines
    ("class score cx cy w h"): the CLI's --gt-names ... and an inputs file's GT_NAMES ...
    `pred_box`, `pred_frame` and `pred_class_map` read the predictions another way, as a "did you
    mean" warning proposes (--pred-box "x1 y1 x2 y2", --pred-frame "letterbox 640", a class map).
    Only assets in both datasets are kept, boxes in one coordinate frame, labels as class names.
    `store` resolves bare dataset ids (default: $PRELABEL_STORE, else ./prelabel-store).
    """
    paired = _read_paired(
        SideSpec.given("gt", gt_ref, gt_format, names=gt_names, layout=gt_layout),
        SideSpec.given(
            "pred",
            pred_ref,
            pred_format,
            names=pred_names,
            layout=pred_layout,
            box=pred_box,
            frame=pred_frame,
            class_map=pred_class_map,
        ),
        store,
    )
    n_images = len(paired.asset_ids)
    return Records(
        predictions=_per_image(paired.pred, paired.class_names, n_images),
        groundtruths=[
            {"bboxes": r["bboxes"], "labels": r["labels"]}
            for r in _per_image(paired.gt, paired.class_names, n_images)
        ],
        asset_ids=list(paired.asset_ids),
    )


def _masks(record: ImageRecord, position: int) -> MaskRuns | None:
    """A record's `masks`, (N, height, width) binary (mmdetection's), as runs; None: it has none."""
    if "masks" not in record:
        return None
    bitmaps = np.asarray(record["masks"])
    if bitmaps.ndim != 3:
        raise ValueError(
            f"Expected `masks` of shape (N, height, width) but got {bitmaps.shape} (record {position})"
        )
    return from_bitmaps(bitmaps.astype(bool))


def _boxes(record: ImageRecord, masks: MaskRuns | None, position: int) -> FloatArray:
    """A record's `bboxes`; its masks' extents where it gives masks and no boxes."""
    if masks is not None and "bboxes" not in record:
        return extent(masks)
    boxes = _column(record, "bboxes", None, position)
    if masks is not None and len(masks) != len(boxes):
        raise ValueError(
            f"Expected as many `masks` as `bboxes` but got {len(masks)} and {len(boxes)} (record {position})"
        )
    return boxes


def _column(record: ImageRecord, key: str, n: int | None, position: int) -> FloatArray:
    """One array of a record, its shape checked: (N, 4) boxes, else (N,) like the boxes."""
    value = np.asarray(record[key], dtype=np.float64 if key != "labels" else None)
    if n is None:
        if value.size == 0:
            return np.empty((0, 4))
        if value.ndim != 2 or value.shape[1] != 4:
            raise ValueError(f"Expected `bboxes` of shape (N, 4) but got {value.shape} (record {position})")
        return value
    if value.shape != (n,) and not (n == 0 and value.size == 0):
        raise ValueError(
            f"Expected `{key}` of shape ({n},) like `bboxes` but got {value.shape} (record {position})"
        )
    return value.reshape(n)


def _class_names(dataset_meta: Mapping[str, Any] | None) -> NDArray[np.str_] | None:
    """mmdetection's `dataset_meta["classes"]`: the names of integer labels 0, 1, ..."""
    classes = (dataset_meta or {}).get("classes")
    return None if classes is None else np.asarray(list(classes), dtype=str)


def _named(labels: NDArray[Any], classes: NDArray[np.str_] | None, position: int) -> NDArray[Any]:
    """Integer labels → their class names when `dataset_meta` names them; other labels as given."""
    if classes is None or labels.dtype.kind not in "iu":
        return labels
    outside = (labels < 0) | (labels >= len(classes))
    if outside.any():
        raise ValueError(
            f"Expected integer labels in [0, {len(classes)}) (dataset_meta['classes'] names "
            f"{len(classes)}) but got {labels[outside][0]} (record {position})"
        )
    names: NDArray[np.str_] = classes[labels]
    return names


def _tables(
    predictions: Sequence[ImageRecord],
    groundtruths: Sequence[ImageRecord],
    classes: NDArray[np.str_] | None = None,
) -> tuple[BoxTable, BoxTable]:
    """Per-image records → two box tables with image = position and one shared class space."""
    if len(predictions) != len(groundtruths):
        raise ValueError(
            f"Expected as many prediction records as groundtruth records but got "
            f"{len(predictions)} and {len(groundtruths)}"
        )
    records = [*groundtruths, *predictions]
    positions = [i % len(groundtruths) for i in range(len(records))]  # the record's image, for errors
    masks = [_masks(r, i) for r, i in zip(records, positions, strict=True)]
    xyxy = [_boxes(r, m, i) for r, m, i in zip(records, masks, positions, strict=True)]
    sizes = [len(b) for b in xyxy]
    labels = np.concatenate(
        [
            _named(_column(r, "labels", n, i), classes, i)
            for r, n, i in zip(records, sizes, positions, strict=True)
        ]
        or [np.empty(0)]
    )
    _, class_id = np.unique(labels, return_inverse=True)
    image = np.concatenate([np.full(n, i % len(groundtruths)) for i, n in enumerate(sizes)] or [np.empty(0)])
    n_gt = sum(sizes[: len(groundtruths)])
    scores = [
        _column({"scores": np.ones(n), **r}, "scores", n, i)
        for i, (r, n) in enumerate(zip(predictions, sizes[len(groundtruths) :], strict=True))
    ]
    # Masks are scored where every record of both sides gives them (`pair_datasets`' rule).
    every = bool(masks) and all(m is not None for m in masks)
    runs = MaskRuns.concatenate([m for m in masks if m is not None]) if every else None
    boxes = BoxTable.build(np.concatenate(xyxy or [np.empty((0, 4))]), class_id, image, masks=runs)
    gt = boxes[:n_gt]
    pred = boxes[n_gt:].with_columns(
        confidence=np.concatenate(scores or [np.empty(0)]),
        source_index=np.arange(len(boxes) - n_gt),
    )
    return gt, pred


def metric_thresholds(iou_min: float, iou_perfect: float, confidence_threshold: float) -> Thresholds:
    """The thresholds of a Python metric, held to node.json's options like the node's inputs."""
    return Thresholds(
        select_number("IOU_MIN", iou_min), select_number("IOU_PERFECT", iou_perfect), confidence_threshold
    )


def evaluate_records(
    predictions: Sequence[ImageRecord],
    groundtruths: Sequence[ImageRecord],
    thresholds: Thresholds,
    dataset_meta: Mapping[str, Any] | None = None,
) -> Evaluation:
    """One engine call over a batch of per-image records (image i = record i)."""
    gt, pred = _tables(predictions, groundtruths, _class_names(dataset_meta))
    crowded = crowded_images(gt, pred, len(groundtruths))
    if len(crowded):
        _warn_crowded([f"record {image}" for image in crowded.tolist()])
        gt, pred = off_images(gt, crowded), off_images(pred, crowded)
    return evaluate(gt, pred, len(groundtruths), thresholds)


class PrelabelingEfficiency:
    """How much labeling work predictions save, accumulated over batches of images.

    The threshold defaults are node.json's (`DEFAULT_THRESHOLDS`), and `iou_min` / `iou_perfect`
    must be one of node.json's options, as for the node (a ValueError otherwise): a score
    computed here is one the node can reproduce.

    Args:
        iou_min: Minimal IoU for a prediction to match a GT box.
        iou_perfect: IoU from which a same-class match needs no correction.
        confidence_threshold: predictions below it are dropped (equal is kept).
        time_costs: seconds per labeler action for `compute().time` (default: `TimeCosts()`,
            drawing 25.5 s after Su et al. 2012, the other actions assumed).
        dataset_meta: as mmeval's: `{"classes": [...]}` names integer labels (label i is
            `classes[i]`), so integer labels compare equal to class names of the other side.

    `add(predictions, groundtruths)` takes one record per image, in mmdetection's style:
    predictions `{"bboxes": (N, 4) xyxy, "labels": (N,), "scores": (N,)}` (scores optional:
    fully confident), groundtruths `{"bboxes": (M, 4), "labels": (M,)}`. Labels may be
    class names or ids; GT and predictions are compared by equal label. Records may carry
    `"masks"`, (N, height, width) binary instance masks (then `bboxes` may be left out: the
    masks' extents); when every record of both sides does, pairs are measured by mask IoU.
    """

    def __init__(
        self,
        iou_min: float = DEFAULT_THRESHOLDS.iou_min,
        iou_perfect: float = DEFAULT_THRESHOLDS.iou_perfect,
        confidence_threshold: float = DEFAULT_THRESHOLDS.confidence_threshold,
        time_costs: TimeCosts | None = None,
        dataset_meta: Mapping[str, Any] | None = None,
    ) -> None:
        self.thresholds = metric_thresholds(iou_min, iou_perfect, confidence_threshold)
        self.time_costs = time_costs or TimeCosts()
        self.dataset_meta = dataset_meta
        self._state = Tally.zero()

    @property
    def dataset_meta(self) -> dict[str, Any] | None:
        """A copy, as mmeval's BaseMetric gives (changing it does not change the metric)."""
        return None if self._dataset_meta is None else dict(self._dataset_meta)

    @dataset_meta.setter
    def dataset_meta(self, dataset_meta: Mapping[str, Any] | None) -> None:
        self._dataset_meta = None if dataset_meta is None else dict(dataset_meta)

    @property
    def name(self) -> str:
        """The metric's name, the class name (as mmeval's BaseMetric)."""
        return type(self).__name__

    @property
    def state(self) -> Tally:
        return self._state

    def add(self, predictions: Sequence[ImageRecord], groundtruths: Sequence[ImageRecord]) -> None:
        self._state = self._state + self._evaluate(predictions, groundtruths)

    def _evaluate(self, predictions: Sequence[ImageRecord], groundtruths: Sequence[ImageRecord]) -> Tally:
        return evaluate_records(predictions, groundtruths, self.thresholds, self._dataset_meta).tally

    def compute(self) -> EfficiencyResult:
        return EfficiencyResult.of(self._state, self.time_costs)

    def reset(self) -> None:
        self._state = Tally.zero()

    def __call__(
        self, *, predictions: Sequence[ImageRecord], groundtruths: Sequence[ImageRecord]
    ) -> EfficiencyResult:
        """Stateless: evaluate these images alone; the accumulated state is left alone."""
        return EfficiencyResult.of(self._evaluate(predictions, groundtruths), self.time_costs)

    def evaluate(self, gt_ref: str, pred_ref: str, store: Store | None = None) -> EfficiencyResult:
        """Stateless, like calling the metric: two dataset references, read and paired as the node
        does and evaluated as box tables (no per-image records in between)."""
        paired = _read_paired(SideSpec("gt", gt_ref), SideSpec("pred", pred_ref), store)
        tally = evaluate(paired.gt, paired.pred, len(paired.asset_ids), self.thresholds).tally
        return EfficiencyResult.of(tally, self.time_costs)

    def merge(self, other: PrelabelingEfficiency) -> PrelabelingEfficiency:
        """A new metric whose state is both states (the two must have seen disjoint images).

        Time costs and dataset_meta do not change the state; the merged metric keeps this one's.
        """
        if not isinstance(other, PrelabelingEfficiency):
            raise TypeError(f"Expected a PrelabelingEfficiency but got {type(other).__name__}")
        if other.thresholds != self.thresholds:
            raise ValueError(
                f"Expected metrics with equal thresholds but got {self.thresholds} and {other.thresholds}"
            )
        merged = PrelabelingEfficiency(
            **vars(self.thresholds), time_costs=self.time_costs, dataset_meta=self._dataset_meta
        )
        merged._state = self._state + other._state
        return merged


def load_outcomes(report_id: str = "latest", *, store: Store | str | None = None) -> dict[str, NDArray[Any]]:
    """The per-box ledger of a stored report as numpy columns, a row per outcome (matched pair,
    false positive, false negative): the rows `prelabel-eval show ID --outcomes` prints, named as
    its columns (docs/report.md, "The ledger"). Text columns are object arrays of str (None for
    none), box indices -1 and floats NaN for none. `store` is a Store or its URI (default: the
    CLI's, $PRELABEL_STORE or ./prelabel-store); `report_id` "latest" is the newest report."""
    from handler.report.ledger import outcome_columns
    from handler.report.publish import latest_report

    opened = store if isinstance(store, Store) else open_store(store_uri(store))
    return outcome_columns(opened, latest_report(opened) if report_id == "latest" else report_id)
