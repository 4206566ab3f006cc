"""Join a GT and a prediction dataset: shared assets, one class space, one coordinate frame."""

from __future__ import annotations

from typing import Literal

import msgspec
import numpy as np
from msgspec.structs import replace

from handler.boxes import AssetTags, BoolArray, BoxTable, Dataset, FloatArray, IntArray, SourceIds
from handler.datasets.assetnames import asset_key
from handler.datasets.frames import missing_size_error, scale_to_pixels
from handler.datasets.reading import sizes_from
from handler.datasets.segmentation import readable
from handler.engine.crowded import crowded_images, off_images
from handler.engine.masks import made
from handler.errors import DatasetError, quoted

# Sizes that differ by at most this many pixels are the same image (tools round differently).
SIZE_TOLERANCE = 1.0
# SCORE_ON: what a pair is measured by (node.json's options).
ScoreOn = Literal["auto", "boxes", "masks"]


class PairedBoxes(msgspec.Struct, frozen=True):
    """Both sides' boxes on the shared assets, indexed by shared image and by a common class."""

    asset_ids: list[str]
    class_names: list[str]
    gt: BoxTable
    pred: BoxTable
    widths: FloatArray
    heights: FloatArray
    normalized: bool
    gt_only_images: int
    pred_only_images: int
    size_mismatch: BoolArray  # per shared asset: both datasets give its size, and the sizes differ
    tags: list[AssetTags] | None = None  # per shared asset: GT's tags, then the predictions' others
    # The GT file's own ids of the shared assets and of the classes ("" for a class it lacks).
    own_ids: SourceIds | None = None
    # Shared assets too crowded to match (`engine.crowded`): their boxes are not in `gt` or `pred`.
    crowded: tuple[CrowdedImage, ...] = ()


class CrowdedImage(msgspec.Struct, frozen=True):
    """A shared asset whose boxes were skipped as too crowded to match, how many per side, and the
    bound it broke (`engine.crowded`'s PROBLEMs)."""

    asset_id: str
    gt_boxes: int
    pred_boxes: int
    reason: str


def _keys(dataset: Dataset) -> list[str]:
    """Each asset's join key; two assets with one key are an error."""
    keys = list(map(asset_key, dataset.asset_ids))
    if len(set(keys)) < len(keys):
        _one_image_per_name(dataset, keys)
    return keys


def _one_image_per_name(dataset: Dataset, keys: list[str]) -> None:
    """Raise on the first asset whose key an earlier one has."""
    first: dict[str, int] = {}
    for index, key in enumerate(keys):
        if key in first:
            raise DatasetError(
                f"{dataset.source}: assets {quoted(dataset.asset_ids[first[key]])} and "
                f"{quoted(dataset.asset_ids[index])} have the same name without extension: "
                "expected one image per name"
            )
        first[key] = index


def shared_images(gt: Dataset, pred: Dataset) -> tuple[IntArray, IntArray]:
    """The shared assets, in the GT's order: each one's image on the GT side and on the
    predictions' side. The same asset list on both sides (a COCO results list's) pairs
    every image with itself."""
    if pred.asset_ids == gt.asset_ids:
        every = np.arange(len(gt.asset_ids), dtype=np.int64)
        return every, every
    gt_keys = _keys(gt)
    pred_index = {key: index for index, key in enumerate(_keys(pred))}
    gt_images = [index for index, key in enumerate(gt_keys) if key in pred_index]
    pred_images = [pred_index[gt_keys[index]] for index in gt_images]
    return np.array(gt_images, dtype=np.int64), np.array(pred_images, dtype=np.int64)


def _identity(mapping: IntArray) -> bool:
    return bool(np.array_equal(mapping, np.arange(len(mapping))))


def _reindex(boxes: BoxTable, image_map: IntArray, class_map: IntArray) -> BoxTable:
    """Keep boxes on shared images, with image and class ids in the shared spaces.

    Columns that need no change are the dataset's own arrays, not copies (the common case:
    every image shared, in the same order), so the boxes are not held twice.
    """
    shared, columns = boxes, {}
    if not _identity(image_map):  # else every box is on a shared image, of the same number
        new_image = image_map[boxes.image]
        on_shared = new_image >= 0
        if not on_shared.all():
            shared, new_image = boxes[on_shared], new_image[on_shared]
        columns["image"] = new_image
    if not _identity(class_map):
        columns["class_id"] = class_map[shared.class_id]
    return shared.with_columns(**columns) if columns else shared


def _frame(paired: PairedBoxes, gt: Dataset, pred: Dataset) -> PairedBoxes:
    """Convert the normalised side to pixels when the other side is in pixels."""
    if gt.normalized == pred.normalized:
        return paired
    side = "gt" if gt.normalized else "pred"
    boxes = getattr(paired, side)
    sized = np.isfinite(paired.widths) & np.isfinite(paired.heights)
    unsized = boxes.image[~sized[boxes.image]]
    if unsized.size:
        side_dataset = gt if gt.normalized else pred
        asset_id = paired.asset_ids[unsized[0]]
        raise missing_size_error(side_dataset.source, asset_id, sizes_from(side_dataset.format))
    converted = scale_to_pixels(boxes, paired.widths, paired.heights)
    return replace(paired, **{side: converted, "normalized": False})


def _first_known(first: FloatArray, second: FloatArray) -> FloatArray:
    return np.where(np.isfinite(first), first, second)


def _shared_tags(
    gt: Dataset, pred: Dataset, gt_images: list[int], pred_images: list[int]
) -> list[AssetTags] | None:
    if gt.asset_tags is None and pred.asset_tags is None:
        return None
    gt_tags = gt.asset_tags or [()] * gt.image_count
    pred_tags = pred.asset_tags or [()] * pred.image_count
    return [
        tuple(dict.fromkeys((*gt_tags[g], *pred_tags[p])))
        for g, p in zip(gt_images, pred_images, strict=True)
    ]


def _size_mismatch(gt: Dataset, pred: Dataset, gt_images: IntArray, pred_images: IntArray) -> BoolArray:
    """NaN (unknown) compares as no difference: only two known, different sizes disagree."""
    with np.errstate(invalid="ignore"):
        width = np.abs(gt.widths[gt_images] - pred.widths[pred_images]) > SIZE_TOLERANCE
        height = np.abs(gt.heights[gt_images] - pred.heights[pred_images]) > SIZE_TOLERANCE
    mismatch: BoolArray = width | height
    return mismatch


def _image_map(images: IntArray, image_count: int) -> IntArray:
    """Each image of a dataset: its place among the shared ones, -1 for an image not shared."""
    mapping = np.full(image_count, -1, dtype=np.int64)
    mapping[images] = np.arange(len(images))
    return mapping


def pair_datasets(gt: Dataset, pred: Dataset) -> PairedBoxes:
    gt_images, pred_images = shared_images(gt, pred)
    shared = len(gt_images)
    class_names = list(gt.class_names)
    class_index = {name: i for i, name in enumerate(class_names)}
    for name in pred.class_names:
        if name not in class_index:
            class_index[name] = len(class_names)
            class_names.append(name)
    pred_classes = np.array([class_index[name] for name in pred.class_names], dtype=np.int64)
    paired = PairedBoxes(
        asset_ids=[gt.asset_ids[i] for i in gt_images.tolist()],
        class_names=class_names,
        gt=_reindex(
            gt.boxes, _image_map(gt_images, gt.image_count), np.arange(len(gt.class_names), dtype=np.int64)
        ),
        pred=_reindex(pred.boxes, _image_map(pred_images, pred.image_count), pred_classes),
        widths=_first_known(gt.widths[gt_images], pred.widths[pred_images]),
        heights=_first_known(gt.heights[gt_images], pred.heights[pred_images]),
        normalized=gt.normalized,
        gt_only_images=gt.image_count - shared,
        pred_only_images=pred.image_count - shared,
        tags=_shared_tags(gt, pred, gt_images.tolist(), pred_images.tolist()),
        size_mismatch=_size_mismatch(gt, pred, gt_images, pred_images),
        own_ids=_own_ids(gt, gt_images.tolist(), len(class_names)),
    )
    return _without_crowded(_frame(_on_masks_or_boxes(paired), gt, pred))


def _on_masks_or_boxes(paired: PairedBoxes) -> PairedBoxes:
    """The masks kept, as runs, where both sides have one for every object (the pairs are then
    measured by them, `engine/matching.py`), else left out of both sides unrasterised: the boxes
    are measured."""
    gt, pred = _parsed_both(paired.gt, paired.pred)
    if gt.has_masks and pred.has_masks:
        return replace(paired, gt=gt, pred=pred)
    return replace(paired, gt=gt.with_columns(masks=None), pred=pred.with_columns(masks=None))


def _parsed_both(gt: BoxTable, pred: BoxTable) -> tuple[BoxTable, BoxTable]:
    """Both tables with their masks made runs when both have a mask for every object (a mask that
    cannot be read is found then); else as they are: their masks are not scored."""
    if not (gt.has_masks and pred.has_masks):
        return gt, pred
    return _made_table(gt), _made_table(pred)


def _made_table(boxes: BoxTable) -> BoxTable:
    """The table with its masks as runs: text parsed, polygons rasterised. Made once both sides'
    masks are known to be scored, where the sides are read (`with_shapes`), the side keeps the
    runs alone, not the vertices too: pairing takes them as they are."""
    return boxes if boxes.masks is None else boxes.with_columns(masks=made(readable(boxes.masks)))


def _boxes_only(dataset: Dataset) -> Dataset:
    return replace(dataset, boxes=dataset.boxes.with_columns(masks=None))


def with_shapes(gt: Dataset, pred: Dataset, score_on: ScoreOn) -> tuple[Dataset, Dataset]:
    """Both sides as SCORE_ON wants them measured: "boxes" leaves their masks out; "masks" needs a
    mask for every object of both; "auto" leaves the choice to `pair_datasets`. Masks still text
    are parsed when both sides have them, so that a side with one that cannot be read is known
    to lack masks before the run says what it scores, and made runs (`_made_table`)."""
    if score_on == "boxes":
        return _boxes_only(gt), _boxes_only(pred)
    gt_boxes, pred_boxes = _parsed_both(gt.boxes, pred.boxes)
    gt, pred = replace(gt, boxes=gt_boxes), replace(pred, boxes=pred_boxes)
    if score_on == "masks":
        for dataset, side in ((gt, "ground truth"), (pred, "predictions")):
            if len(dataset.boxes) and not dataset.boxes.has_masks:
                raise DatasetError(
                    f"{dataset.source}: SCORE_ON is masks, but the {side} do not carry an instance "
                    "mask (polygons or RLE) for every object: score on boxes (SCORE_ON boxes, "
                    "--score-on boxes)"
                )
    return gt, pred


def unscored_masks_left_out(gt: Dataset, pred: Dataset, score_on: ScoreOn) -> tuple[Dataset, Dataset]:
    """Under SCORE_ON auto, both sides without their masks, parsed rows included, when not both
    carry one for every object: pairing leaves them out of every evaluation
    (`_on_masks_or_boxes`), and the search of other readings tries mask readings only when both
    have them. A ground truth's polygons are then not held through a run scored on boxes. Called
    once the sides have said how they were read (their masks named)."""
    if score_on != "auto" or (gt.boxes.has_masks and pred.boxes.has_masks):
        return gt, pred
    return _without_masks(gt), _without_masks(pred)


def _without_masks(dataset: Dataset) -> Dataset:
    parsed = dataset.parsed
    if dataset.boxes.masks is None and (parsed is None or parsed.rows.masks is None):
        return dataset
    return replace(
        dataset,
        boxes=dataset.boxes.with_columns(masks=None),
        parsed=None if parsed is None else replace(parsed, rows=replace(parsed.rows, masks=None)),
    )


def _without_crowded(paired: PairedBoxes) -> PairedBoxes:
    """The paired boxes with those of crowded images skipped (the images stay, with no boxes)."""
    skipped = crowded_images(paired.gt, paired.pred, len(paired.asset_ids))
    if not len(skipped):
        return paired
    n_images, crowded = len(paired.asset_ids), skipped.images
    counts = zip(
        np.bincount(paired.gt.image, minlength=n_images)[crowded].tolist(),
        np.bincount(paired.pred.image, minlength=n_images)[crowded].tolist(),
        skipped.reasons,
        strict=True,
    )
    found = tuple(
        CrowdedImage(paired.asset_ids[image], gt_boxes, pred_boxes, reason)
        for image, (gt_boxes, pred_boxes, reason) in zip(crowded.tolist(), counts, strict=True)
    )
    return replace(
        paired, gt=off_images(paired.gt, crowded), pred=off_images(paired.pred, crowded), crowded=found
    )


def _own_ids(gt: Dataset, images: list[int], classes: int) -> SourceIds | None:
    """The GT file's ids of the shared images and of the paired classes (a prediction-only class
    has none: ""), when it has its own ids for every image and class it read."""
    ids = gt.own_ids
    if ids is None or len(ids.image_ids) != gt.image_count or len(ids.class_ids) != len(gt.class_names):
        return None
    return SourceIds(
        [ids.image_ids[i] for i in images], [*ids.class_ids, *[""] * (classes - len(ids.class_ids))]
    )
