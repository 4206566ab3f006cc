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
synced across processes (the optional `[mmeval]` extra). Both run through the one `FrontDoor`
(handler/front_door.py) the node and compare use, as mmeval's BaseMetric runs: `process` a batch
(its arguments and records checked first), then `compute` the tally.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec
import numpy as np
from msgspec.structs import asdict
from numpy.typing import NDArray

from handler.boxes import BoxTable, MaskRuns
from handler.command_line import store_uri
from handler.datasets.side import SideSpec
from handler.engine import Tally, Thresholds
from handler.engine.timecost import TimeCosts
from handler.front_door import FrontDoor, ImageRecord, read_paired, scored_on_masks
from handler.inputs import DEFAULT_THRESHOLDS, arguments
from handler.report.exports.mask_encodings import coco_strings
from handler.report.findings import EfficiencyResult
from handler.storage import Store, open_store


class Records(msgspec.Struct, frozen=True):
    """Two datasets as `add` takes them: one record per shared asset, in `asset_ids` order."""

    predictions: list[dict[str, Any]]
    groundtruths: list[dict[str, Any]]
    asset_ids: list[str]


def _per_image(boxes: BoxTable, class_names: Sequence[str], n_images: int) -> list[dict[str, Any]]:
    """Split a box table into per-image records (boxes sorted by image, then one split); the masks
    as COCO RLE dicts when the pair is scored on them (runs: `pair_datasets` made them)."""
    order = np.argsort(boxes.image, kind="stable")
    cuts = np.searchsorted(boxes.image[order], np.arange(1, n_images))
    labels = np.asarray(class_names, dtype=object)[boxes.class_id[order]] if len(order) else np.empty(0)
    columns = zip(
        np.split(boxes.xyxy[order], cuts),
        np.split(labels, cuts),
        np.split(boxes.confidence[order], cuts),
        strict=True,
    )
    records = [
        {"bboxes": xyxy, "labels": names.tolist(), "scores": scores} for xyxy, names, scores in columns
    ]
    if isinstance(boxes.masks, MaskRuns):
        for record, masks in zip(records, np.split(_rle_dicts(boxes.masks[order]), cuts), strict=True):
            record["masks"] = masks.tolist()
    return records


def _rle_dicts(masks: MaskRuns) -> NDArray[np.object_]:
    """Each mask as COCO's RLE dict, its counts a compressed string (what `add` reads back)."""
    sizes = np.stack((masks.height, masks.width), axis=1).tolist()
    found = np.empty(len(masks), dtype=object)
    found[:] = [
        {"size": size, "counts": text.decode()} for size, text in zip(sizes, coco_strings(masks), strict=True)
    ]
    return found


def _store(store: Any) -> Store:
    """The store a Python caller gave (a Store or its URI), else the CLI's."""
    given = arguments.instance("store", store, (Store, str, type(None)), "a Store, its URI or None")
    return (
        given if isinstance(given, Store) else open_store(store_uri(arguments.optional_text("store", given)))
    )


def _options(side: str, given: Mapping[str, Any]) -> dict[str, str | None]:
    """A side's read options, each checked (named as `load_records` takes it: `pred_layout`)."""
    return {key: arguments.optional_text(f"{side}_{key}", value) for key, value in given.items()}


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
    pred_score: str | None = None,
    pred_mask: str | None = None,
) -> Records:
    """Read two dataset references as the node does (formats detected unless given) into records.

    `gt_names` / `pred_names` name a side's class ids (a .names/classes.txt list, a data.yaml,
    or a COCO file), `gt_layout` / `pred_layout` give the column order of its text label lines
    ("class score cx cy w h"): the CLI's --gt-names ... and an inputs file's GT_NAMES ...
    `pred_box`, `pred_frame`, `pred_class_map`, `pred_score` and `pred_mask` read the predictions
    another way, as a "did you mean" warning proposes (--pred-box "x1 y1 x2 y2", --pred-frame
    "letterbox 640", a class map, --pred-score "scale 100", --pred-mask "row-major").
    Only assets in both datasets are kept, boxes in one coordinate frame, labels as class names.
    `store` resolves bare dataset ids (default: $PRELABEL_STORE, else ./prelabel-store).
    """
    pred_options = {"names": pred_names, "layout": pred_layout, "box": pred_box, "frame": pred_frame}
    paired = read_paired(
        SideSpec.given(
            "gt",
            arguments.text("gt_ref", gt_ref),
            arguments.optional_text("gt_format", gt_format),
            **_options("gt", {"names": gt_names, "layout": gt_layout}),
        ),
        SideSpec.given(
            "pred",
            arguments.text("pred_ref", pred_ref),
            arguments.optional_text("pred_format", pred_format),
            **_options(
                "pred", {**pred_options, "class_map": pred_class_map, "score": pred_score, "mask": pred_mask}
            ),
        ),
        _store(store),
    )
    n_images = len(paired.asset_ids)
    return Records(
        predictions=_per_image(paired.pred, paired.class_names, n_images),
        groundtruths=[
            {key: value for key, value in r.items() if key != "scores"}
            for r in _per_image(paired.gt, paired.class_names, n_images)
        ],
        asset_ids=list(paired.asset_ids),
    )


def checked_meta(dataset_meta: Any) -> dict[str, Any] | None:
    """mmeval's `dataset_meta`, checked (a copy): `{"classes": [...]}` names integer labels."""
    return arguments.class_names(dataset_meta)[0]


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
    `"masks"`, one per box: mmdetection's (N, height, width) binary instance masks, or a list of
    COCO RLE dicts (`{"size": [height, width], "counts": …}`, as mmdetection's results encode
    them): when every record of both sides does, pairs are measured by mask IoU and the time is
    priced at a mask's seconds (`TimeCosts.on_masks`).
    """

    def __init__(
        self,
        iou_min: float = DEFAULT_THRESHOLDS.iou_min,
        iou_perfect: float = DEFAULT_THRESHOLDS.iou_perfect,
        confidence_threshold: float = DEFAULT_THRESHOLDS.confidence_threshold,
        time_costs: TimeCosts | None = None,
        dataset_meta: Mapping[str, Any] | None = None,
    ) -> None:
        self.door = FrontDoor.of(iou_min, iou_perfect, confidence_threshold, time_costs)
        self.dataset_meta = dataset_meta
        self._state = Tally.zero()
        self._on_masks = False  # the records added carried masks: the time is a mask's

    @property
    def thresholds(self) -> Thresholds:
        return self.door.thresholds

    @property
    def time_costs(self) -> TimeCosts:
        return self.door.time_costs

    @property
    def dataset_meta(self) -> dict[str, Any] | None:
        """A copy, as mmeval's BaseMetric gives (changing it does not change the metric)."""
        return None if self._dataset_meta is None else dict(self._dataset_meta)

    @dataset_meta.setter
    def dataset_meta(self, dataset_meta: Mapping[str, Any] | None) -> None:
        self._dataset_meta = checked_meta(dataset_meta)

    @property
    def name(self) -> str:
        """The metric's name, the class name (as mmeval's BaseMetric)."""
        return type(self).__name__

    @property
    def state(self) -> Tally:
        return self._state

    def add(self, predictions: Sequence[ImageRecord], groundtruths: Sequence[ImageRecord]) -> None:
        evaluation = self.door.process(predictions, groundtruths, self._dataset_meta)
        self._state = self._state + evaluation.tally
        self._on_masks |= scored_on_masks(evaluation)

    def compute(self) -> EfficiencyResult:
        return self.door.compute(self._state, self._on_masks)

    def reset(self) -> None:
        self._state = Tally.zero()
        self._on_masks = False

    def __call__(
        self, *, predictions: Sequence[ImageRecord], groundtruths: Sequence[ImageRecord]
    ) -> EfficiencyResult:
        """Stateless: evaluate these images alone; the accumulated state is left alone."""
        evaluation = self.door.process(predictions, groundtruths, self._dataset_meta)
        return self.door.compute(evaluation.tally, scored_on_masks(evaluation))

    def evaluate(self, gt_ref: str, pred_ref: str, store: Store | None = None) -> EfficiencyResult:
        """Stateless, like calling the metric: two dataset references, read and paired as the node
        does and evaluated as box tables (no per-image records in between)."""
        gt, pred = (
            SideSpec("gt", arguments.text("gt_ref", gt_ref)),
            SideSpec("pred", arguments.text("pred_ref", pred_ref)),
        )
        evaluation = self.door.process_datasets(gt, pred, _store(store))
        return self.door.compute(evaluation.tally, scored_on_masks(evaluation))

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
            **asdict(self.thresholds), time_costs=self.time_costs, dataset_meta=self._dataset_meta
        )
        merged._state = self._state + other._state
        merged._on_masks = self._on_masks or other._on_masks
        return merged


def load_outcomes(report_id: str = "latest", *, store: Store | str | None = None) -> dict[str, NDArray[Any]]:
    """The per-box ledger of a stored report as numpy columns, a row per outcome (matched pair,
    false positive, false negative): the rows `prelabel-eval show ID --outcomes` prints, named as
    its columns (docs/report.md, "The ledger"). Text columns are object arrays of str (None for
    none), box indices -1 and floats NaN for none. `store` is a Store or its URI (default: the
    CLI's, $PRELABEL_STORE or ./prelabel-store); `report_id` "latest" is the newest report."""
    from handler.report.ledger import outcome_columns
    from handler.report.publish import latest_report

    opened, report_id = _store(store), arguments.text("report_id", report_id)
    return outcome_columns(opened, latest_report(opened) if report_id == "latest" else report_id)
