"""A kernel's call checks every value against the argument it was declared with, and refuses one
that does not fit (a wrong dtype, a strided view, a missing array, a float for a size, a wrong
count) with a TypeError naming the kernel and the argument, before C runs: the outputs stay as
they were. An empty array is passed like any other."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from handler.kernels import DOUBLE, F64, I64, SIZE, U32, Fields, kernel

# Real C functions, declared here as their modules declare them.
RESAMPLE_SUMS = kernel("resample_sums", F64, SIZE, SIZE, I64, SIZE, I64, returns=None)
MASKS = Fields(U32, SIZE, I64, I64, I64, I64, F64, SIZE)
PAIR_IOUS = kernel("mask_pair_ious", MASKS, MASKS, I64, I64, SIZE, DOUBLE, F64)
UNTOUCHED = -7
CONTIGUOUS_I64 = "expected a contiguous int64 array"


def sums_arguments() -> tuple[list[object], npt.NDArray[np.int64]]:
    """A valid call of `resample_sums` (2 draws among 3 images of 2 counts each), and its last
    argument, the sums it adds to."""
    doubles = np.array([[0.0, 0.5, 0.9], [0.1, 0.2, 0.3]])
    counts = np.arange(6, dtype=np.int64).reshape(3, 2)
    summed = np.full((2, 2), UNTOUCHED, dtype=np.int64)
    return [doubles, 2, 3, counts, 2, summed], summed


def test_a_valid_call_runs_the_kernel() -> None:
    arguments, summed = sums_arguments()
    RESAMPLE_SUMS(*arguments)
    assert np.array_equal(summed - UNTOUCHED, [[0 + 2 + 4, 1 + 3 + 5], [0 + 0 + 0, 1 + 1 + 1]])


@pytest.mark.parametrize(
    ("position", "value", "message"),
    [
        (4, np.arange(6, dtype=np.int32).reshape(3, 2), f"{CONTIGUOUS_I64}, not int32"),
        (4, np.arange(12, dtype=np.int64).reshape(3, 4)[:, ::2], f"{CONTIGUOUS_I64}, not a strided view"),
        (1, np.asfortranarray(np.zeros((2, 3))), "expected a contiguous float64 array, not a strided view"),
        (4, None, f"{CONTIGUOUS_I64}, not NoneType"),
        (4, [[0, 1], [2, 3], [4, 5]], f"{CONTIGUOUS_I64}, not list"),
        (3, 3.0, "expected an integer, not float"),
    ],
)
def test_a_value_unlike_its_argument_is_refused_before_c_runs(
    position: int, value: object, message: str
) -> None:
    arguments, summed = sums_arguments()
    arguments[position - 1] = value
    with pytest.raises(TypeError, match=f"^kernel resample_sums: argument {position}: {message}$"):
        RESAMPLE_SUMS(*arguments)
    assert (summed == UNTOUCHED).all()


@pytest.mark.parametrize("count", [0, 5, 7])
def test_a_wrong_count_of_values_is_refused_before_c_runs(count: int) -> None:
    arguments, summed = sums_arguments()
    with pytest.raises(TypeError, match=f"^kernel resample_sums: expected 6 arguments, not {count}$"):
        RESAMPLE_SUMS(*[*arguments, summed][:count])
    assert (summed == UNTOUCHED).all()


def one_column_mask() -> tuple[object, ...]:
    """A table of one mask, 4 x 1 pixels, its runs 1 2 1: the `Masks` struct of `src/mask_iou.c`
    (counts, their number, offsets, height, width, area, extent, the masks' number)."""
    counts, offsets = np.array([1, 2, 1], dtype=np.uint32), np.array([0, 3], dtype=np.int64)
    height, width, area = (np.array([v], dtype=np.int64) for v in (4, 1, 2))
    return (counts, 3, offsets, height, width, area, np.array([[0.0, 1.0, 1.0, 3.0]]), 1)


def test_a_struct_s_fields_are_checked_too() -> None:
    gt = one_column_mask()
    bad = (*gt[:2], np.array([0, 3], dtype=np.int32), *gt[3:])
    iou, rows = np.full(1, float(UNTOUCHED)), np.zeros(1, np.int64)
    with pytest.raises(
        TypeError, match=f"^kernel mask_pair_ious: argument 2: field 3: {CONTIGUOUS_I64}, not int32$"
    ):
        PAIR_IOUS(gt, bad, rows, rows, 1, 0.0, iou)
    with pytest.raises(TypeError, match=r"^kernel mask_pair_ious: argument 2: expected 8 fields, not 7$"):
        PAIR_IOUS(gt, gt[:7], rows, rows, 1, 0.0, iou)
    with pytest.raises(
        TypeError, match=r"^kernel mask_pair_ious: argument 6: expected a real number, not str$"
    ):
        PAIR_IOUS(gt, gt, rows, rows, 1, "0", iou)
    assert iou.tolist() == [UNTOUCHED]
    PAIR_IOUS(gt, gt, rows, rows, 1, 0.0, iou)
    assert iou.tolist() == [1.0]


def test_empty_arrays_are_passed_as_any_other() -> None:
    """No argument is ever NULL: an empty array is numpy's pointer, which a kernel given a length
    of 0 does not dereference."""
    summed = np.zeros((0, 2), dtype=np.int64)
    RESAMPLE_SUMS(np.zeros((0, 3)), 0, 3, np.zeros((3, 2), np.int64), 2, summed)
    no_runs = np.zeros(0, dtype=np.uint32)
    no_masks = (no_runs, 0, np.zeros(1, np.int64), *(np.zeros(0, np.int64),) * 3, np.zeros((0, 4)), 0)
    no_pairs = np.zeros(0, np.int64)
    PAIR_IOUS(no_masks, no_masks, no_pairs, no_pairs, 0, 0.0, np.zeros(0))
