"""Candidate pairs and greedy one-to-one matching (contract §5), over all images at once.

Candidate pairs are found without trying every (GT, prediction) pair of an image: IoU ≥ t
needs the two x-intervals to overlap by at least t times the wider one, so the predictions
of an image, sorted by `x_min`, that can reach t with a GT box lie in one window of that
order (`_x_windows`). Only the pairs inside the windows are enumerated, in chunks of about
`budget` pairs, by compiled kernels (`handler/kernels`: the windows, the pairs' IoU, the greedy
matching), with no Python loop per image, box or pair; the exact IoU then decides.
The pairs come out in the greedy order, so re-matching a subset of them (another confidence
threshold) needs no sort.

Where both tables hold masks, the pairs are scored on them: the windows are over the masks'
extents (pycocotools' `toBbox`) with no pruning by the floor (a mask's IoU may exceed its box's),
and every pair whose extents share a pixel and whose areas let it reach the floor gets the exact
mask IoU (`kernels/mask_iou.py`, in C).

Where a table holds rotated boxes, the windows are over the boxes' axis-aligned envelopes (a
pair can only overlap where its envelopes do): a pair with a rotated box whose envelopes overlap
enough to reach the floor gets the exact polygon IoU (`rotated.py`), every other pair the
axis-aligned one, so a dataset without rotated boxes is matched bit for bit as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import msgspec
import numpy as np
import numpy.typing as npt

from handler.boxes import BoolArray, BoxTable, FloatArray, IntArray, Masks, box_area, box_size, is_turned
from handler.engine.iou import overlap
from handler.engine.masks import made, measured, pair_ious
from handler.engine.rotated import corners, envelope, overlap_bound, rotated_iou
from handler.kernels.greedy_match import MAX_LEVELS, taken_at
from handler.kernels.mask_iou import MeasuredRuns
from handler.kernels.window_pairs import Windows, window_pairs
from handler.kernels.x_windows import x_windows

# Pairs enumerated at once: small enough for the columns of a chunk to stay in cache.
PAIR_BUDGET: Final = 1 << 15
# Window bounds are derived with a floor lowered by this factor and widened by this much of the
# coordinates' magnitude, so that float rounding can only add pairs (the exact IoU drops them).
FLOOR_SLACK: Final = 1e-9
# Per prediction (or pair), at how many confidence thresholds it is kept (one byte: at most 21).
Levels = npt.NDArray[np.int8]
UInts = npt.NDArray[np.uint32]


class CandidatePairs(msgspec.Struct, frozen=True):
    """Pairs of a GT box and a prediction on the same image with IoU ≥ a floor.

    `gt` and `pred` index the tables given to `candidate_pairs`; `iou` is the pair's IoU.
    """

    gt: IntArray
    pred: IntArray
    iou: FloatArray

    def __getitem__(self, mask: BoolArray) -> CandidatePairs:
        return CandidatePairs(self.gt[mask], self.pred[mask], self.iou[mask])

    def __len__(self) -> int:
        return len(self.iou)

    @classmethod
    def concatenate(cls, parts: list[CandidatePairs]) -> CandidatePairs:
        if not parts:
            empty = np.empty(0, dtype=np.int64)
            return cls(empty, empty.copy(), np.empty(0))
        return cls(
            np.concatenate([p.gt for p in parts]),
            np.concatenate([p.pred for p in parts]),
            np.concatenate([p.iou for p in parts]),
        )


class MatchResult(msgspec.Struct, frozen=True):
    """One-to-one matches: `gt_match[g]` is the matched prediction or -1, and vice versa."""

    gt_match: IntArray
    pred_match: IntArray
    pred_iou: FloatArray  # IoU with the matched GT box; NaN when unmatched


class _Columns(msgspec.Struct, frozen=True):
    """A table's boxes (its own (N, 4) rows, not gathered) and, position i being row `rows[i]`,
    the rotated boxes' details by position."""

    rows: IntArray
    xyxy: FloatArray
    area: FloatArray
    turned: _Turned | None  # None: no box of either table is rotated

    @classmethod
    def of(cls, table: BoxTable, area: FloatArray, rows: IntArray, with_turned: bool) -> _Columns:
        """`area`: the whole table's box areas (computed once by the caller)."""
        xyxy = np.ascontiguousarray(table.xyxy, dtype=np.float64)
        turned = _Turned.of(xyxy[rows], table.angle[rows], table.quads, rows) if with_turned else None
        return cls(rows, xyxy, np.ascontiguousarray(area, dtype=np.float64), turned)

    def xyxy_at(self, positions: IntArray) -> FloatArray:
        at: FloatArray = self.xyxy[self.rows[positions]]
        return at

    def area_at(self, positions: IntArray) -> FloatArray:
        at: FloatArray = self.area[self.rows[positions]]
        return at


class _Turned(msgspec.Struct, frozen=True):
    """The rows' angles and axis-aligned envelopes, for the pairs with a rotated box, and their
    corners where they are quadrilaterals (`BoxTable.quads`)."""

    angle: FloatArray
    turned: BoolArray
    envelope: FloatArray  # (N, 4)
    quads: FloatArray | None  # (N, 4, 2), NaN rows for the rectangles; None: no quadrilateral

    @classmethod
    def of(cls, xyxy: FloatArray, angle: FloatArray, quads: FloatArray | None, rows: IntArray) -> _Turned:
        turned = is_turned(angle)
        if quads is None:
            return cls(angle, turned, envelope(xyxy, angle), None)
        quads = np.take(quads, rows, axis=0)
        return cls(angle, turned | np.isfinite(quads[:, 0, 0]), envelope(xyxy, angle), quads)

    def corners(self, xyxy: FloatArray, rows: IntArray) -> FloatArray:
        """(n, 4, 2) the corners of `rows`, whose boxes before turning are `xyxy`."""
        shapes = corners(xyxy, self.angle[rows])
        if self.quads is None:
            return shapes
        quads = self.quads[rows]
        return np.where(np.isfinite(quads), quads, shapes)


class _Windows(msgspec.Struct, frozen=True):
    """For GT row g, the candidates are predictions `order[start[g]:stop[g]]`."""

    order: IntArray
    start: IntArray
    stop: IntArray


def _image_windows(gt: BoxTable, pred: BoxTable, n_images: int) -> _Windows:
    """Every prediction of the GT box's image (no pruning: the general fallback)."""
    everything = np.full(len(gt), np.inf)
    return _windows(pred.xyxy[:, 0], pred.image, gt.image, (-everything, everything), n_images)


def _prunable(gt: BoxTable, pred: BoxTable, iou_floor: float) -> bool:
    """Whether the pruning bounds hold: a floor > 0, and finite boxes with x_max ≥ x_min, y_max ≥ y_min."""

    def upright(table: BoxTable) -> bool:
        x0, y0, x1, y1 = table.xyxy.T  # column by column: strided (N, 2) halves compare slowly
        return bool(np.isfinite(table.xyxy).all() and (x1 >= x0).all() and (y1 >= y0).all())

    return bool(iou_floor > 0 and len(gt) and len(pred)) and upright(gt) and upright(pred)


def _x_windows(gt: BoxTable, pred: BoxTable, n_images: int, iou_floor: float) -> _Windows:
    """Windows over predictions sorted by (image, x_min).

    IoU ≥ t needs an x-overlap w ≥ t·max(w_gt, w_pred), so w_pred ≤ w_gt / t and
    x_min_pred ∈ [x_min_gt + t·w_gt - w_gt / t, x_max_gt - t·w_gt].
    """
    t = iou_floor * (1 - FLOOR_SLACK)
    gt_x0, gt_x1 = gt.xyxy[:, 0], gt.xyxy[:, 2]
    width = gt_x1 - gt_x0
    with np.errstate(over="ignore", invalid="ignore"):
        reach = width / t
        slack = FLOOR_SLACK * (np.abs(gt_x0) + np.abs(gt_x1) + reach)
        bounds = gt_x0 + t * width - reach - slack, gt_x1 - t * width + slack
    return _windows(pred.xyxy[:, 0], pred.image, gt.image, bounds, n_images)


def _envelope_windows(gt: BoxTable, pred: BoxTable, n_images: int) -> _Windows | None:
    """Windows over predictions sorted by (image, the x_min of their envelope), for rotated boxes.

    A pair overlaps only where their envelopes do, so the prediction's envelope starts at most the
    widest prediction envelope of the image before the GT's ends; None when that is not finite.
    """
    gt_envelope, pred_envelope = envelope(gt.xyxy, gt.angle), envelope(pred.xyxy, pred.angle)
    if not (np.isfinite(gt_envelope).all() and np.isfinite(pred_envelope).all()):
        return None
    widest = np.zeros(n_images)
    np.maximum.at(widest, pred.image, box_size(pred_envelope)[:, 0])
    gt_x0, gt_x1, reach = gt_envelope[:, 0], gt_envelope[:, 2], widest[gt.image]
    slack = FLOOR_SLACK * (np.abs(gt_x0) + np.abs(gt_x1) + reach)
    return _windows(
        pred_envelope[:, 0], pred.image, gt.image, (gt_x0 - reach - slack, gt_x1 + slack), n_images
    )


def _windows(
    pred_x0: FloatArray,
    pred_image: IntArray,
    gt_image: IntArray,
    bounds: tuple[FloatArray, FloatArray],
    n_images: int,
) -> _Windows:
    """For each GT row, the predictions of its image whose `pred_x0` lies in its `bounds`, the
    predictions sorted by (image, x0) image by image (`kernels.x_windows`)."""
    order, start, stop = x_windows(pred_x0, pred_image, gt_image, bounds, n_images)
    return _Windows(order, start, stop)


def _flat(area: FloatArray, iou_floor: float) -> BoolArray | None:
    """Per box, whether it has no area; None when none lacks it (or every pair counts: a floor of 0)."""
    if iou_floor <= 0:
        return None
    flat: BoolArray = ~(area > 0)
    return flat if flat.any() else None


def _min_heights(gt: _Columns, floor: float | None) -> FloatArray:
    """Per GT box, the y-overlap below which no pair reaches the floor (-inf: no pruning).

    IoU ≥ t needs a y-overlap h ≥ t·max(h_gt, h_pred) ≥ t·h_gt.
    """
    if floor is None:
        return np.full(len(gt.area), -np.inf)
    heights: FloatArray = (gt.xyxy[:, 3] - gt.xyxy[:, 1]) * (floor * (1 - FLOOR_SLACK))
    return heights


def _chunks(counts: IntArray, budget: int) -> Iterator[tuple[int, int]]:
    """Consecutive row ranges [first, last) whose counts sum to about `budget` (at least one row)."""
    cumulative = np.cumsum(counts)
    first = 0
    while first < len(counts):
        already = cumulative[first - 1] if first else 0
        last = max(int(np.searchsorted(cumulative, already + budget, side="right")), first + 1)
        yield first, last
        first = last


def enumerate_ranges(start: IntArray, count: IntArray) -> tuple[IntArray, IntArray]:
    """(row, position) for every position in [start[row], start[row] + count[row])."""
    rows = np.repeat(np.arange(len(count), dtype=np.int64), count)
    shift = np.repeat(start - (np.cumsum(count) - count), count)
    return rows, shift + np.arange(len(rows), dtype=np.int64)


def _pairs_of_rows(
    gt: _Columns,
    pred: _Columns,
    windows: Windows,
    floor: float,
    exact: bool,
    masks: tuple[MeasuredRuns, MeasuredRuns] | None = None,
) -> CandidatePairs:
    """The pairs of the windows' GT rows with the predictions of their windows, IoU ≥ floor.

    A pair whose y-overlap is below its GT row's `min_height` cannot reach the floor: the kernel
    drops it before the rest of its IoU is computed. Not `exact`: a pair with a rotated box that
    its envelopes' bound lets reach the floor is kept at IoU 1, its polygons never clipped. With
    `masks` (both tables' masks, the boxes their extents), a pair's IoU is its masks' (not
    `exact`: 1 where the extents overlap).
    """
    upright = gt.turned is None and masks is None
    # A rotated box's or a mask's IoU is not its box's: those pairs are all measured again below.
    g, p, iou = window_pairs(
        (gt.xyxy, gt.area), (pred.xyxy, pred.area), windows, floor if upright else -np.inf
    )
    if gt.turned is not None and pred.turned is not None:
        iou = _with_turned_pairs(gt, pred, g, p, iou, floor, exact)
    if masks is not None:
        iou = pair_ious(*masks, g, pred.rows[p], floor) if exact else np.where(iou > 0, 1.0, 0.0)
    kept = iou >= floor
    return CandidatePairs(g[kept], pred.rows[p[kept]], iou[kept])


def _with_turned_pairs(
    gt: _Columns, pred: _Columns, g: IntArray, p: IntArray, iou: FloatArray, floor: float, exact: bool
) -> FloatArray:
    """`iou` with the exact IoU of each pair that has a rotated box. The overlap of two boxes
    lies in that of their envelopes and their union is at least the larger area, so a pair
    whose envelopes' overlap over the larger area is below the floor is left at 0 unmeasured;
    not `exact`, the others are set to 1 (the bound, for a count) unmeasured too."""
    assert gt.turned is not None and pred.turned is not None
    turned = np.flatnonzero(gt.turned.turned[g] | pred.turned.turned[p])
    if not len(turned):
        return iou
    iou = iou.copy()
    iou[turned] = 0.0
    g, p = g[turned], p[turned]
    a, b = gt.turned.envelope[g], pred.turned.envelope[p]
    overlap_area = np.maximum(overlap(a[:, 0], a[:, 2], b[:, 0], b[:, 2]), 0.0) * np.maximum(
        overlap(a[:, 1], a[:, 3], b[:, 1], b[:, 3]), 0.0
    )
    area_g, area_p = gt.area_at(g), pred.area_at(p)
    larger = np.maximum(area_g, area_p)
    floor_area = floor * (1 - FLOOR_SLACK) * larger
    near = np.flatnonzero(
        (overlap_area > 0) & (np.minimum(overlap_area, np.minimum(area_g, area_p)) >= floor_area)
    )
    g, p, turned, area_g, area_p, floor_area = (
        g[near],
        p[near],
        turned[near],
        area_g[near],
        area_p[near],
        floor_area[near],
    )
    if not exact:
        iou[turned] = 1.0
        return iou
    angle_g, angle_p = gt.turned.angle[g], pred.turned.angle[p]
    corners_g, corners_p = gt.turned.corners(gt.xyxy_at(g), g), pred.turned.corners(pred.xyxy_at(p), p)
    # A tighter bound, on the boxes' own axes, before the exact overlap.
    close = np.flatnonzero(overlap_bound(corners_g, corners_p, angle_g, angle_p) >= floor_area)
    iou[turned[close]] = rotated_iou(corners_g[close], corners_p[close], area_g[close], area_p[close])
    return iou


def _mask_pair_parts(
    gt: BoxTable, pred: BoxTable, n_images: int, iou_floor: float, budget: int, exact: bool
) -> Iterator[CandidatePairs]:
    """`_pair_parts` of two tables of masks: the pairs on their masks' IoU, found over their
    extents (not `exact`: every pair whose extents overlap, at 1, the bound, for a count)."""
    # Paired tables' masks are runs already (`pair_datasets`): `made` is then the table's own.
    assert isinstance(gt.masks, Masks) and isinstance(pred.masks, Masks)
    masks = measured(made(gt.masks)), measured(made(pred.masks))
    # From here on the tables are their masks' extents: the runs are in `masks`, never selected.
    gt = gt.with_columns(xyxy=masks[0].extent, masks=None)
    pred = pred.with_columns(xyxy=masks[1].extent, masks=None)
    gt_area, pred_area = box_area(gt.xyxy), box_area(pred.xyxy)
    with_area = np.flatnonzero(pred_area > 0)
    windowed = pred[with_area]
    windows = _envelope_windows(gt, windowed, n_images) if len(gt) and len(windowed) else None
    if windows is None:
        windows = _image_windows(gt, windowed, n_images)
    gt_columns = _Columns.of(gt, gt_area, np.arange(len(gt), dtype=np.int64), False)
    pred_columns = _Columns.of(pred, pred_area, with_area[windows.order], False)
    counts = windows.stop - windows.start
    counts[~(gt_area > 0)] = 0
    no_pruning = _min_heights(gt_columns, None)
    for first, last in _chunks(counts, budget):
        rows = Windows(pred_columns.rows, windows.start, counts, no_pruning, first, last)
        yield _pairs_of_rows(gt_columns, pred_columns, rows, iou_floor, exact, masks)


def greedy_order(pairs: CandidatePairs) -> IntArray:
    """Positions of `pairs` in the greedy order: IoU descending, then prediction, then GT.

    One fast (unstable) sort by IoU, then the runs of equal IoU re-sorted by (prediction, GT).
    """
    order = np.argsort(-pairs.iou)
    iou = pairs.iou[order]
    ties = _ties(iou)
    if ties is None:
        return order
    same, in_run = ties
    run = np.cumsum(np.concatenate(([True], ~same)))
    places = np.flatnonzero(in_run)
    members = order[places]
    order[places] = members[np.lexsort((pairs.gt[members], pairs.pred[members], run[places]))]
    return order


def in_greedy_order(pairs: CandidatePairs) -> bool:
    """Whether every pair comes before the next one in the greedy order."""
    iou, pred, gt = pairs.iou, pairs.pred, pairs.gt
    same_iou = iou[1:] == iou[:-1]
    same_pred = pred[1:] == pred[:-1]
    before = (iou[1:] < iou[:-1]) | (same_iou & ((pred[1:] > pred[:-1]) | (same_pred & (gt[1:] > gt[:-1]))))
    return bool(before.all())


def _pair_parts(
    gt: BoxTable, pred: BoxTable, n_images: int, iou_floor: float, budget: int, exact: bool = True
) -> Iterator[CandidatePairs]:
    """The same-image pairs with IoU ≥ `iou_floor`, from about `budget` enumerated pairs at a time
    (not `exact`: those with a rotated box by their envelopes' bound, as `_pairs_of_rows`)."""
    if gt.masks is not None and pred.masks is not None:
        yield from _mask_pair_parts(gt, pred, n_images, iou_floor, budget, exact)
        return
    turned = bool(gt.turned.any() or pred.turned.any())
    # A box without area has no IoU above 0 with anything: it is left out of the windows, so that
    # thousands of points or lines on one image cost nothing (their pairs would all be dropped).
    gt_area, pred_area = gt.area, pred.area
    flat_gt, flat_pred = _flat(gt_area, iou_floor), _flat(pred_area, iou_floor)
    with_area = None if flat_pred is None else np.flatnonzero(~flat_pred)
    windowed = pred if with_area is None else pred[with_area]
    prunable = not turned and _prunable(gt, windowed, iou_floor)
    windows = _x_windows(gt, windowed, n_images, iou_floor) if prunable else None
    if turned and iou_floor > 0 and len(gt) and len(windowed):
        windows = _envelope_windows(gt, windowed, n_images)
    if windows is None:
        windows = _image_windows(gt, windowed, n_images)
    gt_columns = _Columns.of(gt, gt_area, np.arange(len(gt), dtype=np.int64), turned)
    pred_rows = windows.order if with_area is None else with_area[windows.order]
    pred_columns = _Columns.of(pred, pred_area, pred_rows, turned)
    min_height = _min_heights(gt_columns, iou_floor if prunable else None)
    counts = windows.stop - windows.start
    if flat_gt is not None:
        counts[flat_gt] = 0
    for first, last in _chunks(counts, budget):
        rows = Windows(pred_columns.rows, windows.start, counts, min_height, first, last)
        yield _pairs_of_rows(gt_columns, pred_columns, rows, iou_floor, exact)


def candidate_pairs(
    gt: BoxTable, pred: BoxTable, n_images: int, iou_floor: float, budget: int = PAIR_BUDGET
) -> CandidatePairs:
    """All same-image pairs with IoU ≥ `iou_floor`, indices into `gt` and `pred`, in greedy order."""
    pairs = CandidatePairs.concatenate(list(_pair_parts(gt, pred, n_images, iou_floor, budget)))
    order = greedy_order(pairs)
    return CandidatePairs(pairs.gt[order], pairs.pred[order], pairs.iou[order])


class PairCount(msgspec.Struct, frozen=True):
    """The pairs of one image reaching a floor: upright, and with a rotated box by the envelope
    bound (never clipped: what decides whether to match the image must cost little itself)."""

    upright: int
    rotated: int


def count_pairs(gt: BoxTable, pred: BoxTable, iou_floor: float, limit: int) -> PairCount:
    """The pairs of the boxes of one image with IoU ≥ `iou_floor`, counted part by part and no
    further than `limit` of them (the count is then past it), so a count costs about `limit`
    upright pairs at most."""
    upright = rotated = 0
    gt_turned, pred_turned = gt.turned, pred.turned
    for part in _pair_parts(gt, pred, 1, iou_floor, PAIR_BUDGET, exact=False):
        turned = int(np.count_nonzero(gt_turned[part.gt] | pred_turned[part.pred]))
        upright, rotated = upright + len(part) - turned, rotated + turned
        if upright + rotated > limit:
            break
    return PairCount(upright, rotated)


def greedy_match(pairs: CandidatePairs, n_gt: int, n_pred: int, ordered: bool = False) -> MatchResult:
    """Greedy one-to-one matching, highest IoU first, ties to the earlier prediction then GT: the
    pairs taken in the greedy order, each while both its boxes are free (`kernels.greedy_match`).

    Pairs already in the greedy order (as `candidate_pairs` returns them, or any subset of them)
    are not sorted again; `ordered` says the caller knows they are (a subset of `candidate_pairs`'
    pairs), and the check is skipped.
    """
    if not ordered and not in_greedy_order(pairs):
        order = greedy_order(pairs)
        pairs = CandidatePairs(pairs.gt[order], pairs.pred[order], pairs.iou[order])
    taken = np.flatnonzero(taken_at(pairs.gt, pairs.pred, n_gt, n_pred))
    gt, pred = pairs.gt[taken], pairs.pred[taken]
    gt_match = np.full(n_gt, -1, dtype=np.int64)
    pred_match = np.full(n_pred, -1, dtype=np.int64)
    pred_iou = np.full(n_pred, np.nan)
    gt_match[gt], pred_match[pred], pred_iou[pred] = pred, gt, pairs.iou[taken]
    return MatchResult(gt_match, pred_match, pred_iou)


def matched_by_level(pairs: CandidatePairs, n_gt: int, n_pred: int, level: Levels) -> UInts:
    """Per pair of `candidate_pairs` (or a subset), bit k set where the greedy matching of the
    pairs whose prediction's `level` is above k (the predictions a threshold keeps) takes it: the
    matchings of every threshold, in one pass."""
    if len(level) and int(level.max()) > MAX_LEVELS:
        raise ValueError(f"at most {MAX_LEVELS} thresholds are matched at once")
    return taken_at(pairs.gt, pairs.pred, n_gt, n_pred, level)


def _ties(iou: FloatArray) -> tuple[BoolArray, BoolArray] | None:
    """For IoUs sorted (equal ones side by side): whether each has the one before's IoU, and whether
    a neighbour has its IoU (a member of a run of ties); None when no two are equal."""
    same: BoolArray = iou[1:] == iou[:-1]
    if not same.any():
        return None
    in_run = np.zeros(len(iou), dtype=bool)
    in_run[1:] |= same
    in_run[:-1] |= same
    return same, in_run
