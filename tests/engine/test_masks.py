"""Instance masks as runs: every function of `engine/masks.py` against pycocotools, the field's
reference (its C mask API), on drawn bitmaps and polygons.

Bitmaps are drawn empty, full, striped and random; polygons anywhere on and off the image, with
repeated points (an edge of length 0) and several parts to one object."""

from __future__ import annotations

from typing import Any

import numpy as np
import pycocotools.mask as coco_mask
from helpers.coco_masks import from_strings, objects_on_an_image
from helpers.examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from handler.boxes import BoxTable, MaskRuns, UnmadeMasks
from handler.engine.health import duplicate_pairs
from handler.engine.masks import (
    extent,
    from_bitmaps,
    from_polygons,
    made,
    measured,
    well_formed,
)
from handler.kernels.mask_iou import pair_ious

PROPERTY = settings(
    deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)


def _runs(masks: MaskRuns, row: int) -> list[int]:
    runs: list[int] = masks.counts[masks.offsets[row] : masks.offsets[row + 1]].tolist()
    return runs


def area(masks: MaskRuns) -> Any:
    return measured(masks).area


def mask_iou(gt: MaskRuns, pred: MaskRuns, g: Any, p: Any, floor: float = 0.0) -> Any:
    return pair_ious(measured(gt), measured(pred), g, p, floor)


def _coco(masks: MaskRuns) -> list[dict[str, Any]]:
    """Our runs handed to pycocotools as the uncompressed RLE they are."""
    return [
        coco_mask.frPyObjects(
            {"size": [int(masks.height[i]), int(masks.width[i])], "counts": _runs(masks, i)},
            int(masks.height[i]),
            int(masks.width[i]),
        )
        for i in range(len(masks))
    ]


@st.composite
def bitmaps(draw: st.DrawFn) -> np.ndarray[Any, np.dtype[np.bool_]]:
    n, height, width = draw(st.integers(1, 6)), draw(st.integers(1, 24)), draw(st.integers(1, 24))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(("random", "sparse", "blocks", "empty", "full")))
    if kind in ("empty", "full"):
        return np.full((n, height, width), kind == "full")
    if kind == "blocks":
        drawn = np.zeros((n, height, width), dtype=bool)
        for i in range(n):
            y0, x0 = rng.integers(0, height), rng.integers(0, width)
            drawn[i, y0 : y0 + rng.integers(1, height + 1), x0 : x0 + rng.integers(1, width + 1)] = True
        return drawn
    return rng.random((n, height, width)) < (0.5 if kind == "random" else 0.05)


@settings(PROPERTY, max_examples=examples(150))
@given(bitmaps())
def test_bitmaps_strings_area_extent_and_iou_are_pycocotools(
    drawn: np.ndarray[Any, np.dtype[np.bool_]],
) -> None:
    masks = from_bitmaps(drawn)
    reference = [coco_mask.encode(np.asfortranarray(b.astype(np.uint8))) for b in drawn]
    for i, bitmap in enumerate(drawn):
        assert np.array_equal(coco_mask.decode(_coco(masks)[i]).astype(bool), bitmap)
    n, height, width = drawn.shape
    decoded, readable = from_strings([r["counts"] for r in reference], np.full(n, height), np.full(n, width))
    assert readable.all() and well_formed(decoded).all()
    assert all(_runs(decoded, i) == _runs(masks, i) for i in range(n))
    assert np.array_equal(area(masks), coco_mask.area(reference))
    box = coco_mask.toBbox(reference)
    assert np.array_equal(extent(masks), np.concatenate((box[:, :2], box[:, :2] + box[:, 2:]), axis=1))
    gt, pred = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    ours = mask_iou(masks, masks[::-1], gt.ravel(), pred.ravel()).reshape(n, n)
    assert np.array_equal(ours, coco_mask.iou(reference[::-1], reference, [0] * n).T)
    # With a floor, the pairs that reach it keep their IoU and the others stay below it.
    floored = mask_iou(masks, masks[::-1], gt.ravel(), pred.ravel(), 0.5)
    assert np.array_equal(np.where(ours >= 0.5, ours, 0), np.where(floored >= 0.5, floored, 0).reshape(n, n))


POINT = st.floats(-8, 40, allow_nan=False, allow_infinity=False)


def _rasterised(objects: list[list[list[float]]], height: int, width: int) -> MaskRuns:
    parts = [np.asarray(part).reshape(-1, 2) for parts in objects for part in parts]
    owner = np.repeat(np.arange(len(objects)), [len(parts) for parts in objects])
    offsets = np.concatenate(([0], np.cumsum([len(p) for p in parts])))
    n = len(objects)
    return from_polygons(np.concatenate(parts), offsets, owner, np.full(n, height), np.full(n, width))


@settings(PROPERTY, max_examples=examples(200))
@given(objects_on_an_image(POINT))
def test_polygons_are_rasterised_as_pycocotools_frpoly_and_merge(
    drawn: tuple[list[list[list[float]]], int, int],
) -> None:
    objects, height, width = drawn
    masks = _rasterised(objects, height, width)
    reference = [coco_mask.merge(coco_mask.frPyObjects(parts, height, width)) for parts in objects]
    for i, want in enumerate(reference):
        assert np.array_equal(coco_mask.decode(_coco(masks)[i]), coco_mask.decode(want))
    assert np.array_equal(area(masks), coco_mask.area(reference))
    n = len(objects)
    gt, pred = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    ours = mask_iou(masks, masks, gt.ravel(), pred.ravel()).reshape(n, n)
    assert np.array_equal(ours, coco_mask.iou(reference, reference, [0] * n).T)


def _unmade(objects: list[list[list[float]]], height: int, width: int) -> UnmadeMasks:
    """The objects kept as their polygons, as a COCO ground truth's are read."""
    parts = [np.asarray(part, dtype=np.float64).reshape(-1, 2) for parts in objects for part in parts]
    n = len(objects)
    return UnmadeMasks(
        MaskRuns.none(n),
        np.concatenate(parts),
        np.concatenate(([0], np.cumsum([len(p) for p in parts]))).astype(np.int64),
        np.concatenate(([0], np.cumsum([len(parts) for parts in objects]))).astype(np.int64),
        np.full(n, height, dtype=np.int64),
        np.full(n, width, dtype=np.int64),
    )


@settings(PROPERTY, max_examples=examples(60))
@given(objects_on_an_image(POINT))
def test_polygons_kept_unmade_through_a_table_are_made_as_pycocotools(
    drawn: tuple[list[list[list[float]]], int, int],
) -> None:
    """Polygons not yet rasterised follow their rows through selection and concatenation with
    runs and rows without a mask; made, each row is pycocotools' mask of what it was written as."""
    objects, height, width = drawn
    n = len(objects)
    painted = np.zeros((1, height, width), dtype=bool)
    painted[0, : height // 2 + 1, 0] = True
    runs = MaskRuns.concatenate([from_bitmaps(painted), MaskRuns.none(1)])
    joined = BoxTable.concatenate(
        [
            BoxTable.build(np.zeros((2, 4)), [0, 0], [0, 0], masks=runs),
            BoxTable.build(np.zeros((n, 4)), np.zeros(n), np.zeros(n), masks=_unmade(objects, height, width)),
        ]
    )[::-1]
    assert isinstance(joined.masks, UnmadeMasks)
    assert joined.mask_runs.present.tolist() == [True] * n + [False, True]
    masks = made(joined.masks)
    assert masks.present.tolist() == [True] * n + [False, True]
    kept = [i for i in range(n + 2) if i != n]
    reference = [coco_mask.merge(coco_mask.frPyObjects(parts, height, width)) for parts in objects[::-1]]
    reference.append(coco_mask.encode(np.asfortranarray(painted[0].astype(np.uint8))))
    for i, want in zip(kept, reference, strict=True):
        assert np.array_equal(coco_mask.decode(_coco(masks[[i]])[0]), coco_mask.decode(want))


def test_a_single_polygon_gives_frpoly_s_very_runs() -> None:
    square = [[2.0, 2.0, 9.5, 2.0, 9.5, 7.0, 2.0, 7.0]]
    masks = _rasterised([square], 12, 15)
    want, _ = from_strings(
        [coco_mask.frPyObjects(square, 12, 15)[0]["counts"]], np.array([12]), np.array([15])
    )
    assert _runs(masks, 0) == _runs(want, 0)


def test_unreadable_strings_are_flagged() -> None:
    good = coco_mask.encode(np.asfortranarray(np.eye(4, dtype=np.uint8)))["counts"]
    _, readable = from_strings([good, b"0 1", b"", good[:-1] + b"p"], np.full(4, 4), np.full(4, 4))
    assert readable.tolist() == [True, False, False, False]
    short, readable = from_strings([good[:-1]], np.array([4]), np.array([4]))
    assert readable.all() and not well_formed(short).any()


def test_a_box_table_carries_its_masks_through_selection_and_concatenation() -> None:
    drawn = np.zeros((3, 5, 6), dtype=bool)
    drawn[0, 1:3, 2:4] = drawn[1, 0, :] = drawn[2, :, 5] = True
    masks = from_bitmaps(drawn)
    table = BoxTable.build(extent(masks), [0, 1, 2], [0, 0, 1], masks=masks)
    picked = table[np.array([False, True, True])][::-1]
    assert [_runs(picked.mask_runs, i) for i in range(2)] == [_runs(masks, 2), _runs(masks, 1)]
    joined = BoxTable.concatenate([picked, BoxTable.build(np.zeros((1, 4)), [0], [0])])
    assert joined.mask_runs.present.tolist() == [True, True, False]
    assert picked.has_masks and not joined.has_masks
    assert _runs(joined.mask_runs, 1) == _runs(masks, 1)


def test_the_gt_s_duplicates_on_masks_are_found_on_the_masks_not_their_extents() -> None:
    """Two L shapes that fill each other's square share its extent (box IoU 1) and few pixels; a
    copy of one is its duplicate."""
    drawn = np.zeros((3, 6, 6), dtype=bool)
    drawn[0, :, 0] = drawn[0, 5, :] = True
    drawn[1, 0, :] = drawn[1, :, 5] = True
    drawn[2] = drawn[0]
    masks = from_bitmaps(drawn)
    table = BoxTable.build(extent(masks), [0, 0, 0], [0, 0, 0], masks=masks)
    assert duplicate_pairs(table.with_columns(masks=None), 1) == 3
    assert duplicate_pairs(table, 1) == 1
