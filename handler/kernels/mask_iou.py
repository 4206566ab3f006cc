"""Masks' runs measured (the pixels they cover, the areas and extents of the masks) and the IoU of
pairs of masks, in C (`src/mask_iou.c`)."""

from __future__ import annotations

from collections.abc import Callable

import msgspec
import numpy as np
import numpy.typing as npt

from handler.kernels import DOUBLE, F64, I64, SIZE, U16, Fields, kernel, on_two_threads


class MeasuredRuns(msgspec.Struct, frozen=True):
    """Masks as COCO's uncompressed RLE (mask i's runs are `counts[offsets[i]:offsets[i + 1]]`,
    over `height[i]` x `width[i]` pixels) with each one's area and extent ((N, 4) `[x_min, y_min,
    x_max + 1, y_max + 1]`), measured once (`measured`) for all the pairs they are in."""

    counts: npt.NDArray[np.uint16]
    offsets: npt.NDArray[np.int64]
    height: npt.NDArray[np.int64]
    width: npt.NDArray[np.int64]
    area: npt.NDArray[np.int64]
    extent: npt.NDArray[np.float64]

    def __post_init__(self) -> None:
        n = len(self.height)
        if (
            len(self.offsets) != n + 1
            or len(self.width) != n
            or len(self.area) != n
            or self.extent.shape != (n, 4)
        ):
            raise ValueError(
                f"Expected {n + 1} offsets, {n} widths, {n} areas and ({n}, 4) extents but got "
                f"{len(self.offsets)}, {len(self.width)}, {len(self.area)} and {self.extent.shape}"
            )

    def fields(self) -> tuple[object, ...]:
        """The struct `_MASKS` of these masks."""
        counts, n = self.counts, len(self.height)
        return (counts, len(counts), self.offsets, self.height, self.width, self.area, self.extent, n)


# `Masks` of `src/mask_iou.c`: a `MeasuredRuns`' columns (`MeasuredRuns.fields`).
_MASKS = Fields(U16, SIZE, I64, I64, I64, I64, F64, SIZE)
_RUN_TOTALS = kernel("mask_run_totals", U16, SIZE, I64, SIZE, I64)
_MEASURES = kernel("mask_measures", U16, SIZE, I64, I64, SIZE, I64, F64)
_PAIR_IOUS = kernel("mask_pair_ious", _MASKS, _MASKS, I64, I64, SIZE, DOUBLE, F64)


def _checked(status: int, what: str) -> None:
    """A kernel's refusal (-1 - the row it stopped at) raised: the runs or rows it was given do not
    fit together, which no file can cause (the tables build them)."""
    if status < 0:
        raise ValueError(f"{what} {-1 - status} is outside the masks given")


def run_totals(counts: npt.NDArray[np.uint16], offsets: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """(N,) the pixels each mask's runs cover (`counts[offsets[i]:offsets[i + 1]]` summed)."""
    totals = np.empty(len(offsets) - 1, dtype=np.int64)
    status = _RUN_TOTALS(counts, len(counts), offsets, len(totals), totals)
    _checked(status, "mask")
    return totals


def measured(
    counts: npt.NDArray[np.uint16],
    offsets: npt.NDArray[np.int64],
    height: npt.NDArray[np.int64],
    width: npt.NDArray[np.int64],
    halves: bool = False,
) -> MeasuredRuns:
    """Each mask's area (pycocotools' `area`: the pixels of its runs of 1s) and extent (its
    `toBbox` as corners, zeros for a mask without pixels), in one pass over the runs (with
    `halves`, the masks of the later half of the runs on a second thread)."""
    n = len(height)
    masks = MeasuredRuns(counts, offsets, height, width, np.empty(n, dtype=np.int64), np.empty((n, 4)))

    def measure(first: int, stop: int) -> int:
        rows = slice(first, stop)
        status = _MEASURES(
            counts,
            len(counts),
            offsets[first : stop + 1],
            height[rows],
            stop - first,
            masks.area[rows],
            masks.extent[rows],
        )
        return status - first if status < 0 else status

    middle = int(np.searchsorted(offsets, (offsets[0] + offsets[-1]) // 2)) if halves and n else 0
    _checked(_in_halves(measure, min(middle, n), n), "mask")
    return masks


def _in_halves(run: Callable[[int, int], int], middle: int, stop: int) -> int:
    """`run(0, stop)`'s status (its first refusal); with a `middle` inside, run as `run(0, middle)`
    here and `run(middle, stop)` on a second thread."""
    if not 0 < middle < stop:
        return run(0, stop)
    statuses = on_two_threads(lambda: run(0, middle), lambda: run(middle, stop))
    return next((status for status in statuses if status < 0), 0)


def pair_ious(
    gt: MeasuredRuns,
    pred: MeasuredRuns,
    g: npt.NDArray[np.int64],
    p: npt.NDArray[np.int64],
    floor: float = 0.0,
    halves: bool = False,
) -> npt.NDArray[np.float64]:
    """(K,) the IoU of masks `gt[g[k]]` and `pred[p[k]]` (pycocotools' `mask.iou`, not crowd): the
    pixels in both over those in either; 0 where none are in both, where the two masks' sizes
    differ (no pixel of one is a pixel of the other), or where the pair cannot reach `floor`
    (with `halves`, the later half of the pairs on a second thread)."""
    if len(g) != len(p):
        raise ValueError(f"Expected as many GT rows as prediction rows but got {len(g)} and {len(p)}")
    g, p = np.ascontiguousarray(g, dtype=np.int64), np.ascontiguousarray(p, dtype=np.int64)
    iou = np.empty(len(g), dtype=np.float64)
    masks = gt.fields(), pred.fields()

    def measure(first: int, stop: int) -> int:
        rows = slice(first, stop)
        status = _PAIR_IOUS(*masks, g[rows], p[rows], stop - first, floor, iou[rows])
        return status - first if status < 0 else status

    _checked(_in_halves(measure, len(g) // 2 if halves else 0, len(g)), "pair")
    return iou
