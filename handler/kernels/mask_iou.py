"""Masks' runs measured (the pixels they cover, the areas and extents of the masks) and the IoU of
pairs of masks, in C (`src/mask_iou.c`)."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from handler.kernels import POINTER, SIZE, address, kernel


@dataclass(frozen=True)
class MeasuredRuns:
    """Masks as COCO's uncompressed RLE (mask i's runs are `counts[offsets[i]:offsets[i + 1]]`,
    over `height[i]` x `width[i]` pixels) with each one's area and extent ((N, 4) `[x_min, y_min,
    x_max + 1, y_max + 1]`), measured once (`measured`) for all the pairs they are in."""

    counts: npt.NDArray[np.uint32]
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


class _Masks(ctypes.Structure):
    """`Masks` of `src/mask_iou.c`: the addresses of a `MeasuredRuns`' columns."""

    _fields_ = [
        ("counts", POINTER),
        ("n_counts", SIZE),
        ("offsets", POINTER),
        ("height", POINTER),
        ("width", POINTER),
        ("area", POINTER),
        ("extent", POINTER),
        ("n", SIZE),
    ]

    @classmethod
    def of(cls, masks: MeasuredRuns) -> _Masks:
        return cls(
            _counts_address(masks.counts),
            len(masks.counts),
            address(masks.offsets, np.int64),
            address(masks.height, np.int64),
            address(masks.width, np.int64),
            address(masks.area, np.int64),
            address(masks.extent, np.float64),
            len(masks.height),
        )


def _counts_address(counts: npt.NDArray[np.uint32]) -> int | None:
    return address(counts, np.uint32) if len(counts) else None


def _checked(status: int, what: str) -> None:
    """A kernel's refusal (-1 - the row it stopped at) raised: the runs or rows it was given do not
    fit together, which no file can cause (the tables build them)."""
    if status < 0:
        raise ValueError(f"{what} {-1 - status} is outside the masks given")


def run_totals(counts: npt.NDArray[np.uint32], offsets: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """(N,) the pixels each mask's runs cover (`counts[offsets[i]:offsets[i + 1]]` summed)."""
    totals = np.empty(len(offsets) - 1, dtype=np.int64)
    total = kernel("mask_run_totals", POINTER, SIZE, POINTER, SIZE, POINTER)
    status = total(
        _counts_address(counts),
        len(counts),
        address(offsets, np.int64),
        len(totals),
        address(totals, np.int64),
    )
    _checked(status, "mask")
    return totals


def measured(
    counts: npt.NDArray[np.uint32],
    offsets: npt.NDArray[np.int64],
    height: npt.NDArray[np.int64],
    width: npt.NDArray[np.int64],
) -> MeasuredRuns:
    """Each mask's area (pycocotools' `area`: the pixels of its runs of 1s) and extent (its
    `toBbox` as corners, zeros for a mask without pixels), in one pass over the runs."""
    n = len(height)
    masks = MeasuredRuns(counts, offsets, height, width, np.empty(n, dtype=np.int64), np.empty((n, 4)))
    measure = kernel("mask_measures", POINTER, SIZE, POINTER, POINTER, SIZE, POINTER, POINTER)
    status = measure(
        _counts_address(counts),
        len(counts),
        address(offsets, np.int64),
        address(height, np.int64),
        n,
        address(masks.area, np.int64),
        address(masks.extent, np.float64),
    )
    _checked(status, "mask")
    return masks


def pair_ious(
    gt: MeasuredRuns,
    pred: MeasuredRuns,
    g: npt.NDArray[np.int64],
    p: npt.NDArray[np.int64],
    floor: float = 0.0,
) -> npt.NDArray[np.float64]:
    """(K,) the IoU of masks `gt[g[k]]` and `pred[p[k]]` (pycocotools' `mask.iou`, not crowd): the
    pixels in both over those in either; 0 where none are in both, where the two masks' sizes
    differ (no pixel of one is a pixel of the other), or where the pair cannot reach `floor`."""
    if len(g) != len(p):
        raise ValueError(f"Expected as many GT rows as prediction rows but got {len(g)} and {len(p)}")
    g, p = np.ascontiguousarray(g, dtype=np.int64), np.ascontiguousarray(p, dtype=np.int64)
    iou = np.empty(len(g), dtype=np.float64)
    ious = kernel(
        "mask_pair_ious",
        ctypes.POINTER(_Masks),
        ctypes.POINTER(_Masks),
        POINTER,
        POINTER,
        SIZE,
        ctypes.c_double,
        POINTER,
    )
    gt_masks, pred_masks = _Masks.of(gt), _Masks.of(pred)
    status = ious(
        ctypes.byref(gt_masks),
        ctypes.byref(pred_masks),
        address(g, np.int64),
        address(p, np.int64),
        len(g),
        floor,
        address(iou, np.float64),
    )
    _checked(status, "pair")
    return iou
