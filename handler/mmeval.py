"""The metric as an `mmeval.core.BaseMetric`: mmeval syncs it across processes (the `[mmeval]` extra).

>>> metric = PrelabelingEfficiencyMetric(dataset_meta={"classes": ["cat", "dog"]})
>>> metric.add([{"bboxes": [[0, 0, 10, 10]], "labels": [0], "scores": [0.9]}],
...            [{"bboxes": [[0, 0, 10, 10]], "labels": ["cat"]}])
>>> metric.compute(size=1)["efficiency_level"]
'Production-grade'

`add` evaluates a batch in one engine call and keeps one `Tally` per image in `self._results`:
about 240 bytes pickled, and they add up exactly. In an evaluation run on several processes
(`dist_backend` "torch_cuda", "mpi4py", ...), `compute(size=len(dataset))` gathers every
rank's tallies, interleaves them back into dataset order ('unzip', as PyTorch's
DistributedSampler splits a dataset), drops the images the sampler padded, and adds them up:
every rank gets the result one process would compute.

Only this module imports mmeval; the node and `handler.metric` never do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from logging import Logger
from typing import Any

from handler.engine import Tally
from handler.engine.breakdowns import per_image_tallies
from handler.engine.timecost import TimeCosts
from handler.front_door import FrontDoor, ImageRecord, scored_on_masks
from handler.inputs import DEFAULT_THRESHOLDS
from handler.metric import checked_meta

try:
    from mmeval.core import BaseMetric, list_all_backends
except ImportError as missing:  # the optional extra is not installed
    raise ImportError(
        "handler.mmeval needs mmeval: pip install 'evaluate-prelabeling-efficiency[mmeval]'"
    ) from missing

COLLECT_MODES = ("unzip", "cat")


class PrelabelingEfficiencyMetric(BaseMetric):
    """`handler.PrelabelingEfficiency` as an mmeval metric: same records, same result as a dict.

    Args:
        iou_min, iou_perfect, confidence_threshold, time_costs: as `PrelabelingEfficiency`
            (node.json's defaults and options, checked as for the node).
        dataset_meta: `{"classes": [...]}` names integer labels (label i is `classes[i]`);
            mmengine's Evaluator sets it from the dataset's `metainfo`.
        dist_collect_mode: how the ranks' results interleave: "unzip" for PyTorch's
            DistributedSampler (rank r has images r, r + world_size, ...), "cat" for
            contiguous shards.
        dist_backend: one of `mmeval.core.list_all_backends()`; None is mmeval's default
            ("non_dist": no synchronization).
        logger: mmeval's logger unless given.

    `compute()` returns `PrelabelingEfficiency.compute().to_dict()` of the images added:
    assistance score, grade, counts, shares, mean IoU and labeler time.
    """

    def __init__(
        self,
        iou_min: float = DEFAULT_THRESHOLDS.iou_min,
        iou_perfect: float = DEFAULT_THRESHOLDS.iou_perfect,
        confidence_threshold: float = DEFAULT_THRESHOLDS.confidence_threshold,
        time_costs: TimeCosts | None = None,
        dataset_meta: Mapping[str, Any] | None = None,
        dist_collect_mode: str = "unzip",
        dist_backend: str | None = None,
        logger: Logger | None = None,
    ) -> None:
        self.door = FrontDoor.of(iou_min, iou_perfect, confidence_threshold, time_costs)
        self.thresholds, self.time_costs = self.door.thresholds, self.door.time_costs
        _check_choice("dist_collect_mode", dist_collect_mode, COLLECT_MODES)
        if dist_backend is not None:
            _check_choice("dist_backend", dist_backend, tuple(list_all_backends()))
        self._on_masks = False  # the records added carried masks: the time is a mask's
        super().__init__(
            dataset_meta=checked_meta(dataset_meta),
            dist_collect_mode=dist_collect_mode,
            dist_backend=dist_backend,
            logger=logger,
        )

    def add(self, predictions: Sequence[ImageRecord], groundtruths: Sequence[ImageRecord]) -> None:
        """One record per image, as `PrelabelingEfficiency.add`; keeps one tally per image."""
        evaluation = self.door.process(predictions, groundtruths, self.dataset_meta)
        self._results.extend(per_image_tallies(evaluation, len(groundtruths)))
        self._on_masks |= scored_on_masks(evaluation)

    def compute_metric(self, results: list[Tally]) -> dict[str, Any]:
        """The images' tallies added up (exactly, in any order) into the result dict; its time at
        a mask's seconds when the records carried masks (every rank adds the same kind)."""
        return self.door.compute(sum(results, Tally.zero()), self._on_masks).to_dict()

    def reset(self) -> None:
        super().reset()
        self._on_masks = False

    def __call__(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Stateless, as mmeval's: what was added before, masks or not, is left alone."""
        kept, self._on_masks = self._on_masks, False
        try:
            result: dict[str, Any] = super().__call__(*args, **kwargs)
        finally:
            self._on_masks = kept
        return result


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    """mmeval only asserts these; a ValueError names the choices."""
    if value not in choices:
        raise ValueError(f"Expected {name} to be one of {', '.join(choices)} but got {value!r}")
