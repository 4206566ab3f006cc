"""The masks' kernel (`handler/kernels/mask_iou.py`) against pycocotools' C mask API: each mask's
area and extent, and the IoU of every pair, on drawn masks of several sizes (empty ones, pairs
apart, runs of length 0 inside), with and without a floor; and runs or rows that do not fit
together refused, never read past."""

from __future__ import annotations

from typing import Any

import numpy as np
import pycocotools.mask as coco_mask
import pytest
from helpers.examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from handler.boxes import MaskRuns
from handler.kernels.mask_iou import MeasuredRuns, measured, pair_ious, run_totals

PROPERTY = settings(
    deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)
Bitmap = np.ndarray[Any, np.dtype[np.bool_]]


def _runs(bitmap: Bitmap) -> list[int]:
    """The bitmap's column-major runs, 0s first."""
    flat = np.concatenate(([False], bitmap.T.ravel(), [not bitmap.T.ravel()[-1]]))
    edges = np.flatnonzero(flat[1:] != flat[:-1])
    return np.diff(np.concatenate(([0], edges))).tolist()


@st.composite
def masks(draw: st.DrawFn) -> tuple[list[Bitmap], list[list[int]]]:
    """2-7 masks on images of one of two drawn sizes (some of more pixels than a 16-bit run holds:
    their long runs stored in pieces, `MaskRuns`): empty, full, a block (so that pairs are
    apart as often as not) or random pixels; each one's runs, some split by a pair of runs of
    length 0 (the same pixels: pycocotools' own encoding writes none, and its `toBbox` misplaces
    some, so it is given the bitmaps' encoding)."""
    big = draw(st.booleans()) and draw(st.booleans())
    sizes = [
        (draw(st.integers(250, 300)), 300) if big else (draw(st.integers(1, 20)), draw(st.integers(1, 20)))
        for _ in range(2)
    ]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    bitmaps, runs = [], []
    for _ in range(draw(st.integers(2, 7))):
        height, width = sizes[draw(st.integers(0, 1))]
        kind = draw(st.sampled_from(("empty", "full", "block", "random")))
        bitmap = np.full((height, width), kind == "full")
        if kind == "block":
            y0, x0 = rng.integers(0, height), rng.integers(0, width)
            bitmap[y0 : y0 + rng.integers(1, height + 1), x0 : x0 + rng.integers(1, width + 1)] = True
        elif kind == "random":
            bitmap = rng.random((height, width)) < 0.3
        counts = _runs(bitmap)
        if draw(st.booleans()):
            at = int(rng.integers(0, len(counts)))
            counts[at:at] = [0, 0]
        bitmaps.append(bitmap)
        runs.append(counts)
    return bitmaps, runs


def _measured(bitmaps: list[Bitmap], runs: list[list[int]], halves: bool = False) -> MeasuredRuns:
    """The masks measured as a table stores them (16-bit runs, a long one in pieces)."""
    offsets = np.concatenate(([0], np.cumsum([len(r) for r in runs]))).astype(np.int64)
    stored = MaskRuns(
        np.array([c for r in runs for c in r], dtype=np.uint32),
        offsets,
        np.array([b.shape[0] for b in bitmaps], dtype=np.int64),
        np.array([b.shape[1] for b in bitmaps], dtype=np.int64),
    )
    return measured(stored.counts, stored.offsets, stored.height, stored.width, halves)


def _extent(bitmap: Bitmap) -> list[float]:
    rows, columns = np.nonzero(bitmap)
    if not len(rows):
        return [0.0] * 4
    return [columns.min(), rows.min(), columns.max() + 1, rows.max() + 1]


@settings(PROPERTY, max_examples=examples(300))
@given(masks(), st.sampled_from((0.0, 0.3, 0.5, 0.95)), st.booleans())
def test_areas_extents_and_pair_ious_are_pycocotools(
    drawn: tuple[list[Bitmap], list[list[int]]], floor: float, halves: bool
) -> None:
    """Either on this thread alone or in two halves, the later on a second thread."""
    bitmaps, runs = drawn
    ours = _measured(bitmaps, runs, halves)
    coco = [coco_mask.encode(np.asfortranarray(b.astype(np.uint8))) for b in bitmaps]
    assert ours.area.tolist() == coco_mask.area(coco).tolist() == [int(b.sum()) for b in bitmaps]
    assert ours.extent.tolist() == [_extent(b) for b in bitmaps]
    n = len(bitmaps)
    g, p = (index.ravel() for index in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))
    iou = pair_ious(ours, ours, g, p, floor, halves)
    for k, (i, j) in enumerate(zip(g.tolist(), p.tolist(), strict=True)):
        if bitmaps[i].shape != bitmaps[j].shape:
            assert iou[k] == 0.0, "masks of other sizes share no pixel"
            continue
        # pycocotools' own division, bit for bit; below the floor a pair may be left at 0.
        want = coco_mask.iou([coco[j]], [coco[i]], [0])[0, 0]
        assert iou[k] == want or (want < floor and iou[k] == 0.0), (i, j, iou[k], want)


def test_pairs_apart_and_empty_masks_have_no_iou() -> None:
    bitmaps = [np.zeros((6, 8), dtype=bool) for _ in range(4)]
    bitmaps[0][:2, :2] = bitmaps[1][4:, 6:] = bitmaps[2][:2, 1:3] = True
    ours = _measured(bitmaps, [_runs(b) for b in bitmaps])
    iou = pair_ious(ours, ours, np.array([0, 0, 0, 3, 2]), np.array([1, 3, 2, 3, 2]))
    assert iou.tolist() == [0.0, 0.0, 2 / 6, 0.0, 1.0]


@pytest.mark.parametrize("halves", [False, True])
def test_runs_outside_the_counts_or_rows_outside_the_table_are_refused(halves: bool) -> None:
    """In two halves too, the row named is the table's (the first one refused)."""
    counts = np.array([2, 3, 1], dtype=np.uint16)
    with pytest.raises(ValueError, match="mask 1 is outside"):
        measured(counts, np.array([0, 3, 9]), np.array([3, 3]), np.array([2, 2]), halves)
    with pytest.raises(ValueError, match="mask 1 is outside"):
        measured(counts, np.array([0, 3, 9, 3]), np.array([3, 3, 3]), np.array([2, 2, 2]), halves)
    with pytest.raises(ValueError, match="mask 0 is outside"):
        measured(counts, np.array([2, 1]), np.array([3]), np.array([2]))
    with pytest.raises(ValueError, match="mask 1 is outside"):
        run_totals(counts, np.array([0, 1, 4]))
    table = measured(counts, np.array([0, 3]), np.array([3]), np.array([2]))
    for g, p in (([0, 1], [0, 0]), ([0, 0], [0, -1]), ([0, 1, 2], [0, 0, 0])):
        with pytest.raises(ValueError, match="pair 1 is outside"):
            pair_ious(table, table, np.array(g), np.array(p), halves=halves)
    with pytest.raises(ValueError, match=r"and \(1, 4\) extents but got 2, 1, 1 and \(2, 4\)"):
        MeasuredRuns(counts, np.array([0, 3]), *(np.ones(1, dtype=np.int64),) * 3, np.zeros((2, 4)))


@settings(PROPERTY, max_examples=examples(100))
@given(st.lists(st.integers(0, 2**16 - 1), max_size=12), st.integers(-1, 2**62), st.integers(1, 5))
def test_runs_that_do_not_cover_their_mask_are_measured_without_a_fault(
    runs: list[int], height: int, width: int
) -> None:
    """Runs that do not add up to height x width (a table never holds them: readers skip them) are
    still only read where they are: areas, extents and IoU are whatever their pixels give (none
    for a mask of no height, or taller than any image)."""
    table = measured(
        np.array(runs, dtype=np.uint16), np.array([0, len(runs)]), np.array([height]), np.array([width])
    )
    assert table.area[0] == (sum(runs[1::2]) if 0 < height <= 2**48 else 0)
    assert run_totals(table.counts, np.array([0, len(runs) // 2, len(runs)])).tolist() == [
        sum(runs[: len(runs) // 2]),
        sum(runs[len(runs) // 2 :]),
    ]
    assert 0.0 <= pair_ious(table, table, np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64))[0] <= 1.0
