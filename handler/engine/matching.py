"""Candidate pairs and greedy one-to-one matching (contract §5), vectorised over all images.

Candidate pairs are found without trying every (GT, prediction) pair of an image: IoU ≥ t
needs the two x-intervals to overlap by at least t times the wider one, so the predictions
of an image, sorted by `x_min`, that can reach t with a GT box lie in one window of that
order (`_x_windows`). Only the pairs inside the windows are enumerated, in chunks of about
`budget` pairs, with no Python loop per image, box or pair; the exact IoU then decides.
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
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from handler.boxes import BoolArray, BoxTable, FloatArray, IntArray, Masks, box_area, box_size, is_turned
from handler.engine.iou import iou_of_overlap, overlap
from handler.engine.masks import made, measured
from handler.engine.rotated import corners, envelope, overlap_bound, rotated_iou
from handler.kernels.mask_iou import MeasuredRuns, pair_ious

# Pairs enumerated at once: small enough for the columns of a chunk to stay in cache.
PAIR_BUDGET: Final = 1 << 15
# Window bounds are derived with a floor lowered by this factor and widened by this much of
# the key's magnitude, so that float rounding can only add pairs (the exact IoU drops them).
FLOOR_SLACK: Final = 1e-9
KEY_SLACK: Final = 1e-12
# Above this key magnitude (images x coordinate span) the windows fall back to whole images.
MAX_KEY: Final = 2.0**36


@dataclass(frozen=True)
class CandidatePairs:
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


@dataclass(frozen=True)
class MatchResult:
    """One-to-one matches: `gt_match[g]` is the matched prediction or -1, and vice versa."""

    gt_match: IntArray
    pred_match: IntArray
    pred_iou: FloatArray  # IoU with the matched GT box; NaN when unmatched


@dataclass(frozen=True)
class _Columns:
    """A table's boxes as contiguous columns, row i being row `rows[i]` of the table."""

    rows: IntArray
    x0: FloatArray
    y0: FloatArray
    x1: FloatArray
    y1: FloatArray
    area: FloatArray
    turned: _Turned | None  # None: no box of either table is rotated

    @classmethod
    def of(cls, table: BoxTable, area: FloatArray, rows: IntArray, with_turned: bool) -> _Columns:
        """`area`: the whole table's box areas (computed once by the caller)."""
        # Whole rows gathered at once, then made contiguous columns (the pairs gather from them).
        xyxy = np.take(table.xyxy, rows, axis=0)
        x0, y0, x1, y1 = np.ascontiguousarray(xyxy.T)
        turned = _Turned.of(xyxy, table.angle[rows], table.quads, rows) if with_turned else None
        return cls(rows, x0, y0, x1, y1, area[rows], turned)


@dataclass(frozen=True)
class _Turned:
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


@dataclass(frozen=True)
class _Windows:
    """For GT row g, the candidates are predictions `order[start[g]:stop[g]]`."""

    order: IntArray
    start: IntArray
    stop: IntArray


def _image_ranges(image: IntArray, n_images: int) -> tuple[IntArray, IntArray]:
    """Start and stop of each image's rows in a table sorted by image."""
    stops = np.cumsum(np.bincount(image, minlength=n_images)).astype(np.int64)
    return np.concatenate(([0], stops[:-1])).astype(np.int64), stops


def _image_windows(gt: BoxTable, pred: BoxTable, n_images: int) -> _Windows:
    """Every prediction of the GT box's image (no pruning: the general fallback)."""
    starts, stops = _image_ranges(pred.image, n_images)
    return _Windows(np.argsort(pred.image, kind="stable"), starts[gt.image], stops[gt.image])


def _prunable(gt: BoxTable, pred: BoxTable, iou_floor: float) -> bool:
    """Whether the pruning bounds hold: a floor > 0, and finite boxes with x_max ≥ x_min, y_max ≥ y_min."""

    def upright(table: BoxTable) -> bool:
        x0, y0, x1, y1 = table.xyxy.T  # column by column: strided (N, 2) halves compare slowly
        return bool(np.isfinite(table.xyxy).all() and (x1 >= x0).all() and (y1 >= y0).all())

    return bool(iou_floor > 0 and len(gt) and len(pred)) and upright(gt) and upright(pred)


def _x_windows(gt: BoxTable, pred: BoxTable, n_images: int, iou_floor: float) -> _Windows | None:
    """Windows over predictions sorted by (image, x_min); None when keys would lose precision.

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
) -> _Windows | None:
    """For each GT row, the predictions of its image whose `pred_x0` lies in its `bounds`, from one
    sort of the predictions by one float key, image·span + x0 (the windows clamped to the image);
    None when the keys would lose precision."""
    low = float(pred_x0.min())
    span = float(pred_x0.max()) - low + 1.0
    if n_images * span > MAX_KEY:
        return None
    key = pred_image * span + (pred_x0 - low)  # increases with (image, x0)
    order = np.argsort(key, kind="stable")  # timsort uses runs: files usually group by image
    key = key[order]
    slack = FLOOR_SLACK * (abs(low) + span) + KEY_SLACK * n_images * span
    base = gt_image * span - low
    with np.errstate(over="ignore", invalid="ignore"):
        first = np.searchsorted(key, base + bounds[0] - slack, "left")
        last = np.searchsorted(key, base + bounds[1] + slack, "right")
    image_start, image_stop = (bound[gt_image] for bound in _image_ranges(pred_image, n_images))
    start = np.clip(first, image_start, image_stop)
    return _Windows(order, start, np.clip(last, start, image_stop))


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
        return np.full(len(gt.y0), -np.inf)
    return (gt.y1 - gt.y0) * (floor * (1 - FLOOR_SLACK))


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
    start: IntArray,
    count: IntArray,
    rows: slice,
    floor: float,
    min_height: FloatArray,
    exact: bool,
    masks: tuple[MeasuredRuns, MeasuredRuns] | None = None,
) -> CandidatePairs:
    """The pairs of GT rows `rows` with the predictions of their windows (the `count` positions
    from `start` in `pred`), IoU ≥ floor.

    A pair whose y-overlap is below `min_height` of its GT row cannot reach the floor: it is
    dropped before the rest of its IoU is computed. Not `exact`: a pair with a rotated box that
    its envelopes' bound lets reach the floor is kept at IoU 1, its polygons never clipped. With
    `masks` (both tables' masks, the boxes their extents), a pair's IoU is its masks' (not
    `exact`: 1 where the extents overlap).
    """
    ends = np.cumsum(count)
    p = np.repeat(start - (ends - count), count) + np.arange(int(ends[-1]) if len(ends) else 0)
    # The y-overlap of every enumerated pair, in place (`overlap`'s operations, in its order).
    top = np.minimum(np.repeat(gt.y1[rows], count), pred.y1[p])
    height = np.subtract(top, np.maximum(np.repeat(gt.y0[rows], count), pred.y0[p]), out=top)
    near = np.flatnonzero(height >= np.repeat(min_height[rows], count))
    # Only the pairs near in y learn their GT row: the window their position falls in.
    g = np.searchsorted(ends, near, "right") + rows.start
    p, height = p[near], height[near]
    width = overlap(gt.x0[g], gt.x1[g], pred.x0[p], pred.x1[p])
    iou = iou_of_overlap(width, height, gt.area[g], pred.area[p])
    if gt.turned is not None and pred.turned is not None:
        iou = _with_turned_pairs(gt, pred, g, p, iou, floor, exact)
    if masks is not None:
        iou = pair_ious(*masks, g, pred.rows[p], floor) if exact else np.where(iou > 0, 1.0, 0.0)
    keep = iou >= floor
    return CandidatePairs(g[keep], pred.rows[p[keep]], iou[keep])


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
    area_g, area_p = gt.area[g], pred.area[p]
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
    corners_g, corners_p = gt.turned.corners(_xyxy(gt, g), g), pred.turned.corners(_xyxy(pred, p), p)
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
        rows = slice(first, last)
        yield _pairs_of_rows(
            gt_columns,
            pred_columns,
            windows.start[rows],
            counts[rows],
            rows,
            iou_floor,
            no_pruning,
            exact,
            masks,
        )


def _xyxy(columns: _Columns, rows: IntArray) -> FloatArray:
    return np.stack((columns.x0[rows], columns.y0[rows], columns.x1[rows], columns.y1[rows]), axis=1)


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
        rows = slice(first, last)
        yield _pairs_of_rows(
            gt_columns, pred_columns, windows.start[rows], counts[rows], rows, iou_floor, min_height, exact
        )


def candidate_pairs(
    gt: BoxTable, pred: BoxTable, n_images: int, iou_floor: float, budget: int = PAIR_BUDGET
) -> CandidatePairs:
    """All same-image pairs with IoU ≥ `iou_floor`, indices into `gt` and `pred`, in greedy order."""
    pairs = CandidatePairs.concatenate(list(_pair_parts(gt, pred, n_images, iou_floor, budget)))
    order = greedy_order(pairs)
    return CandidatePairs(pairs.gt[order], pairs.pred[order], pairs.iou[order])


@dataclass(frozen=True)
class PairCount:
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


def _position_type(n_pairs: int) -> type[np.signedinteger[Any]]:
    """int32 when it holds every position and a mark above them: half the memory traffic."""
    return np.int32 if n_pairs < np.iinfo(np.int32).max else np.int64


def greedy_match(pairs: CandidatePairs, n_gt: int, n_pred: int, ordered: bool = False) -> MatchResult:
    """Greedy one-to-one matching, highest IoU first, ties to the earlier prediction then GT.

    Equivalent to taking the best remaining pair again and again, done in rounds: a pair
    that is the best remaining pair of both its prediction and its GT box can never be
    pre-empted, so every such pair is accepted at once, and so is every pair of a tie block
    (`_tie_block_pairs`). Pairs already in the greedy order (as `candidate_pairs` returns
    them, or any subset of them) are not sorted again; `ordered` says the caller knows they are
    (a subset of `candidate_pairs`' pairs), and the check is skipped.

    A round costs O(pairs still alive): the alive pairs are kept compacted with their boxes,
    and the per-box buffers are allocated once; a round touches only the alive pairs' entries.
    """
    if not ordered and not in_greedy_order(pairs):
        order = greedy_order(pairs)
        pairs = CandidatePairs(pairs.gt[order], pairs.pred[order], pairs.iou[order])
    gt_match = np.full(n_gt, -1, dtype=np.int64)
    pred_match = np.full(n_pred, -1, dtype=np.int64)
    pred_iou = np.full(n_pred, np.nan)
    # Matched yet: one byte per box, so the lookups of every round stay in cache.
    gt_taken, pred_taken = np.zeros(n_gt, dtype=bool), np.zeros(n_pred, dtype=bool)
    position = _position_type(len(pairs))
    no_pair = np.iinfo(position).max
    # first_for_x[box]: the earliest alive position among the box's pairs, in this round.
    first_for_gt = np.full(n_gt, no_pair, dtype=position)
    first_for_pred = np.full(n_pred, no_pair, dtype=position)
    alive = np.arange(len(pairs), dtype=position)  # positions in the order, still free
    alive_gt, alive_pred, alive_iou = pairs.gt, pairs.pred, pairs.iou
    ties = _ties(pairs.iou)
    tied = None if ties is None else ties[1]  # per alive pair: another pair has its IoU
    while alive.size:
        # Accept every pair that is first in the order for its prediction and its GT.
        np.minimum.at(first_for_gt, alive_gt, alive)
        np.minimum.at(first_for_pred, alive_pred, alive)
        won = (first_for_gt[alive_gt] == alive) & (first_for_pred[alive_pred] == alive)
        if tied is not None and tied.any():
            gt_tied, pred_tied = alive_gt[tied], alive_pred[tied]
            tops = (pairs.iou[first_for_gt[gt_tied]], pairs.iou[first_for_pred[pred_tied]])
            won[tied] |= _tie_block_pairs(gt_tied, pred_tied, alive_iou[tied], tops)
        won_gt, won_pred = alive_gt[won], alive_pred[won]
        gt_match[won_gt], gt_taken[won_gt] = won_pred, True
        pred_match[won_pred], pred_taken[won_pred] = won_gt, True
        pred_iou[won_pred] = alive_iou[won]
        # Drop every pair that touches a box matched in this round.
        free = ~(gt_taken[alive_gt] | pred_taken[alive_pred])
        alive, alive_gt, alive_pred = alive[free], alive_gt[free], alive_pred[free]
        alive_iou = alive_iou[free]
        tied = None if tied is None else tied[free]
        # Only the boxes of the pairs left are read again: clear just their entries.
        first_for_gt[alive_gt] = no_pair
        first_for_pred[alive_pred] = no_pair
    return MatchResult(gt_match, pred_match, pred_iou)


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


def _tie_block_pairs(
    gt: IntArray, pred: IntArray, iou: FloatArray, tops: tuple[FloatArray, FloatArray]
) -> BoolArray:
    """Per tied alive pair, whether the sequential greedy takes it now, by whole tie blocks.

    A tie block is a set X of predictions and Y of GT boxes whose best alive pairs all have one
    IoU v, every one of X paired with every one of Y at v and with nothing else at v. Nothing
    else can take them before v, and at v the greedy takes X's predictions in order, each with
    the first free box of Y: the k-th of X with the k-th of Y. Without this, identical boxes (a
    tie block of n by n pairs) would be matched one pair per round. `tops` is, per pair, the best
    alive IoU of its GT box and of its prediction. A pair outside the greedy order's ties is in
    no block, and is its boxes' only pair at that IoU.
    """
    # Boxes numbered 0.. among these pairs: a round's work stays the tied pairs' size.
    gt_box, g_all = np.unique(gt, return_inverse=True)
    pred_box, p_all = np.unique(pred, return_inverse=True)
    n_gt, n_pred = len(gt_box), len(pred_box)
    at_gt_top, at_pred_top = iou == tops[0], iou == tops[1]
    edge = np.flatnonzero(at_gt_top & at_pred_top)
    taken = np.zeros(len(iou), dtype=bool)
    if not len(edge):
        return taken
    # At its best IoU, a box of a block has no pair but the block's.
    level_gt = np.bincount(g_all[at_gt_top], minlength=n_gt)
    level_pred = np.bincount(p_all[at_pred_top], minlength=n_pred)
    g, p = g_all[edge], p_all[edge]
    degree_gt, degree_pred = np.bincount(g, minlength=n_gt), np.bincount(p, minlength=n_pred)
    # A block's key: its first GT box (the least of a prediction's partners) and first prediction.
    first_gt, first_pred = np.full(n_pred, n_gt), np.full(n_gt, n_pred)
    np.minimum.at(first_gt, p, g)
    np.minimum.at(first_pred, g, p)
    keys, block, edges = np.unique(
        first_gt[p] * n_pred + first_pred[g], return_inverse=True, return_counts=True
    )
    members_gt = np.bincount(first_pred[np.unique(g)], minlength=n_pred)[first_pred[g]]
    members_pred = np.bincount(first_gt[np.unique(p)], minlength=n_gt)[first_gt[p]]
    whole = (
        (edges[block] == members_gt * members_pred)
        & (degree_gt[g] == members_pred)
        & (degree_pred[p] == members_gt)
        & (level_gt[g] == degree_gt[g])
        & (level_pred[p] == degree_pred[p])
    )
    # A block is whole only if all its pairs are: one pair that is not spoils it.
    spoiled = np.zeros(len(keys), dtype=bool)
    spoiled[block[~whole]] = True
    keep = ~spoiled[block]
    taken[edge[keep]] = _rank_in_block(g[keep], block[keep]) == _rank_in_block(p[keep], block[keep])
    return taken


def _rank_in_block(box: IntArray, block: IntArray) -> IntArray:
    """Per pair, its box's place among the distinct boxes of its block, in index order."""
    order = np.lexsort((box, block))
    box, block = box[order], block[order]
    new_box = np.concatenate(([True], (box[1:] != box[:-1]) | (block[1:] != block[:-1])))
    distinct = np.cumsum(new_box) - 1
    new_block = np.concatenate(([True], block[1:] != block[:-1]))
    block_start = np.maximum.accumulate(np.where(new_block, distinct, 0))
    rank = np.empty(len(box), dtype=np.int64)
    rank[order] = distinct - block_start
    return rank
