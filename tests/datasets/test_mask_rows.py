"""How a reader hands masks to `build_dataset`: a `MaskRuns` column aligned with its `ParsedRows`,
kept, skipped and left out (crowds) with the boxes it goes with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import msgspec
import numpy as np
import pycocotools.mask as coco_mask
import pytest
from helpers.label_studio_prepared import COCO_PAIR, COCO_PAIR_GT, COCO_PAIR_RESULTS
from helpers.needs import existing

from handler.boxes import Images, MaskRuns, ParsedRows, WrittenMasks
from handler.datasets import load_dataset, pair_datasets, segmentation
from handler.datasets.builder import build_dataset
from handler.datasets.pairing import with_shapes
from handler.datasets.read_options import ReadOptions
from handler.datasets.segmentation import readable, segmentation_masks
from handler.engine.masks import extent, from_bitmaps, made, measured
from handler.readings.sides import read_as
from handler.storage import open_source


def test_masks_follow_their_rows_through_the_rules() -> None:
    drawn = np.zeros((4, 6, 8), dtype=bool)
    for i in range(4):
        drawn[i, i : i + 2, 2 * i : 2 * i + 3] = True
    masks = from_bitmaps(drawn)
    xyxy = extent(masks)
    xyxy[1, 0] = np.nan  # a defective box: skipped with its mask
    rows = ParsedRows(
        xyxy=xyxy,
        class_id=np.zeros(4, dtype=np.int64),
        image=np.zeros(4, dtype=np.int64),
        source_index=None,
        position=lambda row: f"annotation {row}",
        crowd=np.array([False, False, True, False]),  # a crowd region: left out with its mask
        masks=masks,
    )
    images = Images(["a.jpg"], np.array([8.0]), np.array([6.0]))
    dataset = build_dataset("gt.json", "coco", rows, images, ["cat"])
    kept = dataset.boxes
    assert len(kept) == 2 and kept.has_masks
    assert np.array_equal(extent(kept.mask_runs), extent(masks[[0, 3]]))
    assert dataset.skipped_count == 1 and dataset.crowd_excluded == 1


def test_a_coco_ground_truth_s_polygons_are_rasterised_only_when_masks_are_scored() -> None:
    """Read, the polygons stay the text they were written as; paired with box predictions they
    are left out unparsed, with mask predictions made into runs whose pixels are pycocotools'."""
    existing(COCO_PAIR, "the third-party data")
    gt = load_dataset(open_source(str(COCO_PAIR_GT)))
    assert isinstance(gt.dataset.boxes.masks, WrittenMasks) and gt.dataset.boxes.has_masks
    boxes = load_dataset(open_source(str(COCO_PAIR_RESULTS)), None, gt)
    assert pair_datasets(gt.dataset, boxes.dataset).gt.masks is None
    masks = load_dataset(open_source(str(COCO_PAIR / "instances_val2014_fakesegm100_results.json")), None, gt)
    paired = pair_datasets(gt.dataset, masks.dataset).gt
    assert isinstance(paired.masks, MaskRuns)
    document = json.loads(COCO_PAIR_GT.read_text())
    sizes = {i["id"]: (i["height"], i["width"]) for i in document["images"]}
    pixels = sum(
        int(coco_mask.area(coco_mask.merge(coco_mask.frPyObjects(a["segmentation"], *sizes[a["image_id"]]))))
        for a in document["annotations"]
        if not a["iscrowd"]
    )
    assert int(measured(paired.masks).area.sum()) == pixels > 0


# Every kind of `segmentation` value as a file may space it, on an image with a size (1) and one
# without (2): by row, the value's text and whether it is a mask.
WRITTEN: Final = (
    ("[[10, 10, 20, 10, 20, 20, 10, 20]]", True),
    ("[ [1,1,5,1,5,5] ]", True),
    ("[]", False),
    ("[ ]", False),
    ("null", False),
    ('{"size": [30, 40], "counts": [5, 10, 1185]}', True),
    ('{"size": [30, 40], "counts": "a0g0"}', True),
    ("{ }", False),
    ("5", False),
    ('"polygon"', False),
    ("[[1e400, 2, 3, 4, 5, 6]]", True),  # written, then not readable: no mask once parsed
    ("[[1, 2, 3]]", True),
)


def _written_gt(tmp_path: Path, values: tuple[str | None, ...], image: int = 1) -> Path:
    """A COCO ground truth of one box per value (None: the annotation names no `segmentation`)."""
    annotations = ",".join(
        f'{{"id": {i}, "image_id": {image}, "category_id": 1, "bbox": [1, 1, 5, 5]'
        + ("" if value is None else f', "segmentation": {value}')
        + "}"
        for i, value in enumerate(values)
    )
    images = '[{"id": 1, "file_name": "a.jpg", "width": 40, "height": 30}, {"id": 2, "file_name": "b.jpg"}]'
    path = tmp_path / "gt.json"
    path.write_text(
        f'{{"images": {images}, "annotations": [{annotations}], "categories": [{{"id": 1, "name": "cat"}}]}}'
    )
    return path


@pytest.mark.parametrize("image", [1, 2])
def test_masks_read_as_text_are_the_masks_read_as_values(tmp_path: Path, image: int) -> None:
    """A typed COCO file keeps `segmentation` as text and tells a mask by its first bytes; parsed,
    the masks are those of the same values read at once (a row naming none has none)."""
    values = tuple(text for text, _ in WRITTEN)
    masks = load_dataset(open_source(str(_written_gt(tmp_path, (*values, None), image)))).dataset.boxes.masks
    assert isinstance(masks, WrittenMasks)
    claimed = [has and (image == 1 or not text.startswith("[")) for text, has in WRITTEN] + [False]
    assert masks.present.tolist() == claimed
    parsed = [json.loads(text) for text in values] + [None]
    sizes = np.array([40.0, np.nan]), np.array([30.0, np.nan])
    at_once = segmentation_masks(parsed, np.full(len(parsed), image - 1), *sizes, np.zeros(len(parsed), bool))
    assert at_once.masks is not None
    made_now, made_later = made(at_once.masks), made(readable(masks))
    assert made_later.present.tolist() == made_now.present.tolist()
    assert np.array_equal(made_later.counts, made_now.counts)
    assert np.array_equal(made_later.offsets, made_now.offsets)


def test_a_mask_that_cannot_be_read_leaves_its_side_on_boxes_when_both_have_masks(tmp_path: Path) -> None:
    """Masks on both sides are parsed before the run says what it scores: a ground truth with a
    polygon of three numbers has not a mask for every object, so the boxes are scored."""
    polygon = "[[10, 10, 20, 10, 20, 20, 10, 20]]"
    gt = load_dataset(open_source(str(_written_gt(tmp_path, (polygon, "[[1, 2, 3]]")))))
    results = tmp_path / "results.json"
    results.write_text(
        json.dumps(
            [
                {
                    "image_id": 1,
                    "category_id": 1,
                    "bbox": [10, 10, 10, 10],
                    "score": 0.9,
                    "segmentation": json.loads(polygon),
                }
            ]
        )
    )
    pred = load_dataset(open_source(str(results)), None, gt)
    assert gt.dataset.boxes.has_masks and pred.dataset.boxes.has_masks  # as written
    scored_gt, scored_pred = with_shapes(gt.dataset, pred.dataset, "auto")
    assert not scored_gt.boxes.has_masks and scored_pred.boxes.has_masks
    assert pair_datasets(scored_gt, scored_pred).gt.masks is None


def _results_read_as(tmp_path: Path, results: list[dict[str, object]]) -> tuple[str, ...]:
    """The read-as line of a results file scored against a GT of one 40 x 30 image."""
    gt_file, results_file = tmp_path / "gt.json", tmp_path / "results.json"
    polygon = [[10, 10, 20, 10, 20, 20, 10, 20]]
    gt_file.write_text(
        json.dumps(
            {
                "images": [{"id": 1, "file_name": "a.jpg", "width": 40, "height": 30}],
                "categories": [{"id": 1, "name": "cat"}],
                "annotations": [
                    {"id": 1, "image_id": 1, "category_id": 1, "bbox": [10, 10, 10, 10], "area": 100.0}
                    | {"iscrowd": 0, "segmentation": polygon}
                ],
            }
        )
    )
    results_file.write_text(json.dumps(results))
    gt = load_dataset(open_source(str(gt_file)))
    predictions = load_dataset(open_source(str(results_file)), None, gt).dataset
    return read_as(predictions, ReadOptions()).read_as


def test_a_results_file_of_masks_without_boxes_names_its_masks_not_a_box_convention(tmp_path: Path) -> None:
    rle = coco_mask.encode(np.asfortranarray(np.pad(np.ones((8, 6), dtype=np.uint8), ((9, 13), (12, 22)))))
    mask = {
        "image_id": 1,
        "category_id": 1,
        "score": 0.9,
        "segmentation": rle | {"counts": rle["counts"].decode()},
    }
    parts = _results_read_as(tmp_path, [mask, mask])
    assert not [part for part in parts if part.startswith("boxes as")], parts
    assert "masks, each box its shape's extent (the format's: it writes no box for them)" in parts

    boxed = {"image_id": 1, "category_id": 1, "score": 0.8, "bbox": [1, 1, 5, 5], "segmentation": []}
    parts = _results_read_as(tmp_path, [mask, boxed])
    assert "boxes as x y w h (the format's)" in parts
    assert (
        "1 of 2 objects as masks, each box its shape's extent (the format's: it writes no box for them)"
        in parts
    )


# Values each read with its reason (None: a mask), on a 30 x 40 image (row 7: on an image of
# unknown size).
REASONS: Final = (
    ([[10, 10, 20, 10, 20, 20]], None),
    ([[1, 2, 3]], segmentation.BAD_POLYGONS),
    ([[1, 2, 3, 4, "5", 6]], segmentation.BAD_POLYGONS),
    ({"size": [30, 40], "counts": [5]}, segmentation.RUNS_SHORT),
    ({"size": [30, 40], "counts": [-5, 1205]}, segmentation.RUNS_SHORT),
    ({"size": [30, 40], "counts": "\\"}, segmentation.RUNS_SHORT),
    ({"size": [3, 4], "counts": [12]}, segmentation.OTHER_SIZE),
    ([[10, 10, 20, 10, 20, 20]], segmentation.NO_SIZE),
    ({"size": [30, 40.0], "counts": [1200]}, segmentation.BAD_RLE),
    ({"size": [30, 40], "counts": [1200.0]}, segmentation.BAD_RLE),
    ({"counts": [1200]}, segmentation.BAD_RLE),
    ({"size": [30, 40], "counts": [1200]}, None),
)


@pytest.mark.parametrize("as_text", [False, True])
def test_each_value_that_cannot_be_read_is_rejected_with_its_reason(as_text: bool) -> None:
    """Parsed values and the text a typed decoding keeps are read alike, with the same reasons."""
    values: list[Any] = [value for value, _ in REASONS]
    if as_text:
        values = [msgspec.Raw(json.dumps(value).encode()) for value in values]
    image = np.zeros(len(REASONS), dtype=np.int64)
    image[7] = -1
    read = segmentation_masks(values, image, np.array([40.0]), np.array([30.0]), np.ones(len(REASONS), bool))
    assert read.rejected == {row: why for row, (_, why) in enumerate(REASONS) if why is not None}
    assert read.masks is not None
    assert made(read.masks).present.tolist() == [why is None for _, why in REASONS]


def test_a_counts_string_with_a_backslash_is_read_as_pycocotools_reads_it(tmp_path: Path) -> None:
    """COCO's alphabet holds `\\`, which JSON writes `\\\\`: read unescaped, the mask is
    pycocotools' own."""
    generator = np.random.default_rng(7)
    while True:
        bitmap = np.asfortranarray(generator.random((40, 30)) < 0.5, dtype=np.uint8)
        rle = coco_mask.encode(bitmap)
        if b"\\" in rle["counts"]:
            break
    text = json.dumps({"size": rle["size"], "counts": rle["counts"].decode()}).encode()
    assert b"\\\\" in text
    one = np.zeros(1, np.int64)
    read = segmentation_masks([msgspec.Raw(text)], one, np.array([30.0]), np.array([40.0]), np.ones(1, bool))
    assert read.rejected == {} and read.masks is not None
    runs, want = made(read.masks), from_bitmaps(coco_mask.decode(rle)[None].astype(bool))
    assert np.array_equal(runs.counts, want.counts) and np.array_equal(runs.offsets, want.offsets)
