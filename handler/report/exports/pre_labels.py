"""The pre-labels of a stored report under a policy: its candidates (the `pre_labels` chunks the
shards wrote, handler/engine/pre_label_boxes.py) kept at the thresholds the policy says.

- `routing`: each class at the threshold its row of the report's `routing` section chose;
  a class routing sends to drawing, or one it does not list (no box at any threshold), has none.
- `single`: every class at the run's one confidence threshold.

Nothing here reads a dataset: the report's parts are all it takes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import TYPE_CHECKING, Final, Literal, get_args

import numpy as np
import orjson

from handler.boxes import FloatArray
from handler.engine.evaluation import keep_mask
from handler.engine.pre_label_boxes import Candidates, read_chunks
from handler.errors import DatasetError, quoted

if TYPE_CHECKING:
    from handler.report.findings import Routing

Policy = Literal["routing", "single"]
POLICIES: Final[tuple[Policy, ...]] = get_args(Policy)
# The candidates' float32 coordinates hold about 7 digits: written to these decimals, the text
# carries no float32 noise, and a box moves by at most 0.0005 px (of a 10,000 px image in fractions).
PIXEL_DECIMALS: Final = 3
FRACTION_DECIMALS: Final = 7
# Images whose text is built at once: an export's peak memory is the report's candidates and one
# block's text, not the whole file's (a 50k-image Label Studio export: 986 MB before, 185-204 MB now).
BLOCK_IMAGES: Final = 2000


@dataclass(frozen=True)
class Block:
    """Some images of an export, counted from `first_image`, their boxes from `first_box`."""

    first_image: int
    first_box: int
    labels: PreLabels


@dataclass(frozen=True)
class PreLabels:
    """The boxes a policy pre-labels on every image of a report, and what produced them."""

    boxes: Candidates
    report_id: str
    policy: Policy
    model: str  # the prediction dataset's file name
    # Per image (as `boxes.asset_ids`), the review queue's expected seconds of correction (0 for
    # an image the queue does not list: one with no GT).
    work_seconds: FloatArray

    def blocks(self) -> Iterator[Block]:
        """The pre-labels BLOCK_IMAGES images at a time, in order."""
        for start in range(0, len(self.boxes.asset_ids), BLOCK_IMAGES):
            stop = start + BLOCK_IMAGES
            boxes = self.boxes.images(start, stop)
            first_box = self.boxes.rows_of_images(start, stop).start
            yield Block(
                start, first_box, replace(self, boxes=boxes, work_seconds=self.work_seconds[start:stop])
            )

    @property
    def model_version(self) -> str:
        """What names these pre-labels in a labeling tool: the model, the policy, the report."""
        return f"{self.model} ({self.policy} policy, {self.report_id})"

    def image_sizes(self, target: str) -> tuple[FloatArray, FloatArray]:
        """Every image's width and height; a DatasetError naming the first of unknown size."""
        boxes = self.boxes
        unknown = ~(np.isfinite(boxes.widths) & np.isfinite(boxes.heights))
        if unknown.any():
            raise DatasetError(
                f"report {self.report_id}: image {quoted(boxes.asset_ids[int(np.argmax(unknown))])} has "
                f"no known size, and {target} needs one (the datasets gave neither a size nor the image)"
            )
        return boxes.widths, boxes.heights

    def convertible(self, unit: Literal["pixels", "fractions"], target: str) -> None:
        """Raise now what `pixels` or `fractions` would for an image of unknown size, without
        converting a box: what an exporter checks of the whole report before its first file."""
        if self.boxes.normalized == (unit == "pixels"):  # the conversion needs the images' sizes
            self.image_sizes(target)

    def _sizes(self, target: str) -> tuple[FloatArray, FloatArray]:
        """Each box's image width and height (every image's size known)."""
        widths, heights = self.image_sizes(target)
        return widths[self.boxes.image], heights[self.boxes.image]

    def pixels(self, target: str) -> FloatArray:
        """(n, 4) left, top, width, height in pixels, to PIXEL_DECIMALS (what float32 holds)."""
        if not self.boxes.normalized:
            return np.round(self.boxes.xywh, PIXEL_DECIMALS)
        widths, heights = self._sizes(target)
        return np.round(
            self.boxes.xywh * np.stack((widths, heights, widths, heights), axis=1), PIXEL_DECIMALS
        )

    def fractions(self, target: str) -> FloatArray:
        """(n, 4) left, top, width, height in 0-1 image fractions."""
        if self.boxes.normalized:
            return np.round(self.boxes.xywh, FRACTION_DECIMALS)
        widths, heights = self._sizes(target)
        return self.pixels(target) / np.stack((widths, heights, widths, heights), axis=1)


def class_thresholds(routing: Routing, class_names: list[str], policy: Policy) -> FloatArray:
    """Per class, the confidence threshold its boxes are pre-labeled at; NaN for none."""
    if policy == "single":
        return np.full(len(class_names), routing.single_threshold)
    chosen = {row.class_name: row.threshold for row in routing.classes}
    return np.array([chosen.get(name) for name in class_names], dtype=np.float64)  # None -> NaN


def lowest_thresholds(routing: Routing) -> dict[str, float]:
    """Per class, the lowest threshold either policy pre-labels it at (what a stored report keeps)."""
    single = routing.single_threshold
    return {
        row.class_name: min(single, single if row.threshold is None else row.threshold)
        for row in routing.classes
    }


def pre_labels(
    findings_json: bytes, chunks: Sequence[bytes], policy: Policy, work_seconds: Mapping[str, float]
) -> PreLabels:
    """The pre-labels of a report under `policy`, from its findings, its `pre_labels` chunks and
    its review queue's seconds by asset id."""
    from handler.report.findings import Routing  # the CLI lists the targets without the report models

    findings = orjson.loads(findings_json)
    report_id, routing = findings["report_id"], Routing.model_validate(findings["routing"])
    candidates = read_chunks(chunks)
    thresholds = class_thresholds(routing, candidates.class_names, policy)
    kept = keep_mask(candidates.confidence, thresholds[candidates.class_id])  # NaN keeps nothing
    model = PurePath(findings["dataset"]["pred_source"]).name or findings["dataset"]["pred_source"]
    seconds = np.array([work_seconds.get(asset, 0.0) for asset in candidates.asset_ids], dtype=np.float64)
    return PreLabels(candidates[kept], report_id, policy, model, seconds)


# An exporter's files, each a path and its content: whole, or in pieces (a big file, built a
# block at a time), written by the caller as they come (`--out` is the first). What an exporter
# checks of the whole report it checks before it gives the first file, so a refusal writes nothing.
Files = Iterator[tuple[PurePath, bytes | Iterator[bytes]]]


@dataclass(frozen=True)
class ExportTarget:
    """One labeling tool's import format, named after the format of ours that reads it back:
    `files(pre_labels, out, image_root)` gives what to write."""

    name: str
    files: Callable[[PreLabels, PurePath, str], Files]
    help: str
