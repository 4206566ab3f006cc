"""The pre-labels of a stored report under a policy: its candidates (the `pre_labels` chunks the
shards wrote, handler/engine/pre_label_boxes.py) kept at the thresholds the policy says.

- `recommended` (the default): the report's recommendation, `routing.json`: each class at its
  threshold there; a class it sends to drawing, or one it does not list (no box at any
  threshold), has none.
- `per-class`: each class at its own fastest threshold, whatever its boxes (small classes too).
- `single`: every class at the recommendation's single threshold.
- `threshold X`: every class at X (the threshold given reproduces the graded run).

Nothing here reads a dataset: the report's parts are all it takes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import PurePath
from typing import TYPE_CHECKING, Final, Literal, get_args

import msgspec
import numpy as np
import orjson
from msgspec.structs import replace

from handler.boxes import FloatArray, MaskRuns, is_turned
from handler.datasets.cvat import CVAT as CVAT_FORMAT
from handler.datasets.labelstudio import LABEL_STUDIO as LABEL_STUDIO_FORMAT
from handler.datasets.textfolder import YOLO_OBB_FORMAT
from handler.engine.evaluation import keep_mask
from handler.engine.pre_label_boxes import Candidates, Floors, read_chunks
from handler.engine.rotated import corners
from handler.errors import DatasetError, quoted
from handler.report.exports.columns_text import joined_by_row, numbers, rows
from handler.report.exports.mask_encodings import mask_areas
from handler.report.exports.mask_outlines import outlines
from handler.report.json_lines import ObjectArray
from handler.sections.wording import counted

if TYPE_CHECKING:
    from handler.report.findings import Recommendation

PolicyName = Literal["recommended", "per-class", "single", "threshold"]
POLICIES: Final[tuple[PolicyName, ...]] = get_args(PolicyName)
# How a tool that takes both gets the masks of a report scored on masks: as pixel masks (exactly the
# masks scored) or as polygons (`mask_outlines`, exact too: edited point by point in the tools).
MaskShape = Literal["mask", "polygon"]
MASK_SHAPES: Final[tuple[MaskShape, ...]] = get_args(MaskShape)


class Policy(msgspec.Struct, frozen=True):
    """Which thresholds an export applies: a policy's name, and X for `threshold X`."""

    name: PolicyName = "recommended"
    threshold: float | None = None

    def __str__(self) -> str:
        return self.name if self.threshold is None else f"{self.name} {self.threshold:g}"

    @classmethod
    def parse(cls, words: Sequence[str]) -> Policy:
        """`recommended`, `per-class`, `single` or `threshold X` (ValueError says what was expected)."""
        expected = "expected recommended, per-class, single or threshold X (X from 0 to 1)"
        name = words[0] if words else ""
        if name == "threshold" and len(words) == 2:
            try:
                value = float(words[1].replace(",", "."))
            except ValueError:
                value = math.nan
            if 0 <= value <= 1:
                return cls("threshold", value)
        elif name in POLICIES and name != "threshold" and len(words) == 1:
            return cls(name)
        raise ValueError(f"{' '.join(words)!r}: {expected}")


# The candidates' float32 coordinates hold about 7 digits: written to these decimals, the text
# carries no float32 noise, and a box moves by at most 0.0005 px (of a 10,000 px image in fractions).
PIXEL_DECIMALS: Final = 3
FRACTION_DECIMALS: Final = 7
# The targets whose boxes carry an angle (named after the formats that read them back).
TURNED_TARGETS: Final = (LABEL_STUDIO_FORMAT.name, CVAT_FORMAT.name, YOLO_OBB_FORMAT.name)
# Images whose text is built at once: an export's peak memory is the report's candidates and one
# block's text, not the whole file's.
BLOCK_IMAGES: Final = 2000


class PointText(msgspec.Struct, frozen=True):
    """How a target writes a polygon's point: the text before x, between x and y, after y, and
    the factor of the coordinates (100: percent)."""

    before: bytes
    between: bytes
    after: bytes = b""
    scale: float = 1.0


class Block(msgspec.Struct, frozen=True):
    """Some images of an export, counted from `first_image`, their boxes from `first_box`."""

    first_image: int
    first_box: int
    labels: PreLabels


class PreLabels(msgspec.Struct, frozen=True):
    """The boxes a policy pre-labels on every image of a report, and what produced them."""

    boxes: Candidates
    report_id: str
    policy: Policy
    model: str  # the prediction dataset's file name
    # Per image (as `boxes.asset_ids`), the review queue's expected seconds of correction (0 for
    # an image the queue does not list: one with no GT).
    work_seconds: FloatArray
    mask_shape: MaskShape = "mask"  # the masks' shape where a target takes both (`--mask-shape`)
    # Predictions kept whose mask holds no pixel (a COCO result's empty RLE beside its `bbox`):
    # left out, as no tool draws them, and counted.
    empty_masks: int = 0

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
        return f"{self.model} ({self.policy} policy, {self.report_id})"  # Policy's str: its name

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

    def corners(
        self, unit: Literal["pixels", "fractions"], target: str, quadrilaterals: bool = False
    ) -> FloatArray:
        """(n, 4, 2) each box's corners, turned (top-left, top-right, bottom-right, bottom-left of
        the box before turning), in `unit`: a rotated box is turned in pixels, where it is a rectangle.
        `quadrilaterals` (a target that writes corners): a quadrilateral of an image of unknown size
        (`BoxTable.quads`, in 0-1) is its own four corners, not the rectangle holding it."""
        left, top, width, height = self.pixels(target).T if not self.boxes.normalized else self.boxes.xywh.T
        points = corners(np.stack((left, top, left + width, top + height), axis=1), self.boxes.angle)
        if quadrilaterals and self.boxes.quads is not None:
            points = np.where(np.isfinite(self.boxes.quads), self.boxes.quads, points)
        if (unit == "pixels") != self.boxes.normalized:
            return points
        widths, heights = self._sizes(target)
        size = np.stack((widths, heights), axis=1)[:, None, :]
        return points / size if unit == "fractions" else points * size

    @property
    def shape(self) -> Literal["box", "mask", "polygon"]:
        """What a target that takes masks writes: boxes, or the masks as `mask_shape` says."""
        return "box" if self.boxes.masks is None else self.mask_shape

    def polygon_texts(
        self, unit: Literal["pixels", "fractions"], point: PointText, separator: bytes
    ) -> ObjectArray:
        """Per pre-label, its mask's polygon (`mask_outlines`) as text: each point `point` (pieces before x,
        between x and y, after y) in `unit` times `point.scale`, the points joined by `separator`.
        Fractions are not rounded: a reader scaling them back lands on the pixel edge written."""
        masks = self.boxes.masks
        assert masks is not None  # a target asks for polygons of a report scored on masks only
        found = outlines(masks)
        owner = np.repeat(np.arange(len(masks)), np.diff(found.offsets))
        xy = found.points.astype(np.float64)
        if unit == "fractions":
            xy = xy / np.column_stack((masks.width, masks.height))[owner]
        xy *= point.scale
        texts = rows(len(xy), point.before, numbers(xy[:, 0]), point.between, numbers(xy[:, 1]), point.after)
        return joined_by_row(texts, owner, len(masks), separator)

    def with_masks(self, target: str) -> MaskRuns:
        """The pre-labels' masks; a DatasetError, before any file, for a report scored on boxes."""
        if self.boxes.masks is None:
            raise DatasetError(
                f"report {self.report_id}: the run scored boxes, and {target} writes masks: export it "
                "--to yolo, or run again on masks (SCORE_ON masks, both sides with polygons or RLE)"
            )
        return self.boxes.masks

    def upright(self, target: str) -> None:
        """Refuse, before a file is written, rotated boxes for a target that has no angle."""
        turned = int(np.count_nonzero(is_turned(self.boxes.angle)))
        if turned:
            carried_by = ", ".join(f"--to {name}" for name in TURNED_TARGETS)
            rotated = counted(turned, "pre-label is a rotated box", "pre-labels are rotated boxes")
            raise DatasetError(
                f"report {self.report_id}: {rotated} "
                f"and {target} boxes have no angle: export them with {carried_by}"
            )


def class_thresholds(recommended: Recommendation, class_names: list[str], policy: Policy) -> FloatArray:
    """Per class, the confidence threshold its boxes are pre-labeled at; NaN for none."""
    if policy.name == "single":
        return np.full(len(class_names), recommended.threshold)
    if policy.threshold is not None:
        return np.full(len(class_names), policy.threshold)
    own = policy.name == "per-class"
    chosen = [recommended.threshold_for(name, own) for name in class_names]
    return np.array(chosen, dtype=np.float64)  # None -> NaN


def lowest_thresholds(recommended: Recommendation, used: float) -> Floors:
    """The lowest threshold a policy but `threshold X` pre-labels a class at, or the threshold
    given: what a stored report keeps of the candidates (per listed class, and for the others)."""
    listed = {
        row.class_name: min(
            t for t in (used, recommended.threshold, row.threshold, row.own_threshold) if t is not None
        )
        for row in recommended.classes
    }
    return Floors(listed, min(used, recommended.threshold))


def _kept_enough(recommended: Recommendation, used: float, policy: Policy, report_id: str) -> None:
    """`threshold X` below what the report kept of some class's candidates is refused, by name."""
    if policy.threshold is None:
        return
    lowest = lowest_thresholds(recommended, used)
    short = sorted((t, quoted(name)) for name, t in lowest.listed.items() if t > policy.threshold)
    if lowest.others > policy.threshold:
        short.append((lowest.others, "every other class"))
    if short:
        t, name = max(short)
        raise DatasetError(
            f"report {report_id}: --policy threshold {policy.threshold:g} needs predictions below what "
            f"the report kept ({name} from {t:g}); use a threshold of at least {t:g}"
        )


def pre_labels(
    report_id: str,
    findings_json: bytes,
    chunks: Sequence[bytes],
    policy: Policy,
    work_seconds: Mapping[str, float],
) -> PreLabels:
    """The pre-labels of a report under `policy`, from its findings, its `pre_labels` chunks and
    its review queue's seconds by asset id (a damaged part: one StorageError line naming it)."""
    from handler.report.findings import Recommendation  # the CLI lists the targets without the models
    from handler.report.publish import FINDINGS_PART, PRE_LABELS, reading_part

    with reading_part(report_id, FINDINGS_PART):
        findings = orjson.loads(findings_json)
        recommended = Recommendation.model_validate(findings["recommendation"])
        used = float(findings["parameters"]["confidence_threshold"])
        source = str(findings["dataset"]["pred_source"])
    _kept_enough(recommended, used, policy, report_id)
    with reading_part(report_id, PRE_LABELS):
        candidates = read_chunks(chunks)
    thresholds = class_thresholds(recommended, candidates.class_names, policy)
    kept = keep_mask(candidates.confidence, thresholds[candidates.class_id])  # NaN keeps nothing
    model = PurePath(source).name or source
    seconds = np.array([work_seconds.get(asset, 0.0) for asset in candidates.asset_ids], dtype=np.float64)
    boxes = candidates[kept]
    drawn = np.ones(len(boxes), dtype=bool) if boxes.masks is None else mask_areas(boxes.masks) > 0
    return PreLabels(
        boxes[drawn], report_id, policy, model, seconds, empty_masks=int(np.count_nonzero(~drawn))
    )


# An exporter's files, each a path and its content: whole, or in pieces (a big file, built a
# block at a time), written by the caller as they come (`--out` is the first). What an exporter
# checks of the whole report it checks before it gives the first file, so a refusal writes nothing.
Files = Iterator[tuple[PurePath, bytes | Iterator[bytes]]]


class ExportTarget(msgspec.Struct, frozen=True):
    """One labeling tool's import format, named after the format of ours that reads it back:
    `files(pre_labels, out, image_root)` gives what to write."""

    name: str
    files: Callable[[PreLabels, PurePath, str], Files]
    help: str
    # What the tool needs for the files to land (given the image root), said in one line; None: nothing.
    needs: Callable[[PreLabels, str], str] | None = None
    carries_model_version: bool = False  # the files name the model version (Label Studio's predictions)
    writes_masks: bool = False  # a report scored on masks is written as its masks (else as their boxes)
