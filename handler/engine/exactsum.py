"""A sum of float64 values held exactly, so that shards add up to the one-shot result bit for bit.

Every finite double is an integer multiple of 2**-1074; the sum is kept as that integer
(a Python int), so adding two sums is exact, associative and order-independent, and the
float it gives is the correctly rounded sum (what `math.fsum` of all the values returns).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Final

import msgspec
import numpy as np

from handler.boxes import FloatArray, IntArray

# value = mantissa_int * 2**(exponent - 53) = mantissa_int * 2**(exponent + SHIFT) / 2**SCALE_BITS
SCALE_BITS: Final = 1127
SHIFT: Final = SCALE_BITS - 53
# Mantissas (< 2**53) are summed in three 18-bit pieces: a float64 bincount of pieces below
# 2**18 stays an exact integer for up to 2**35 values.
PIECE_BITS: Final = 18
# One sum of values whose exponents differ by at most NARROW_SPAN: mantissas shifted to a common
# exponent take 53 + 9 bits, and halves of 31 bits sum exactly in an int64 for up to 2**32 values.
NARROW_SPAN: Final = 9
HALF_BITS: Final = 31


def _exact_integers(values: FloatArray, groups: IntArray, n_groups: int) -> list[int]:
    """Σ values · 2**SCALE_BITS of each group, exactly, with no Python loop per value.

    The loop is per (group, exponent) present: few for values of one kind (IoUs: about 4
    exponents), so the sums of every image of a batch cost little more than one sum.
    """
    totals = [0] * n_groups
    if not len(values):
        return totals
    if not np.isfinite(values).all():
        raise ValueError("Expected finite values for an exact sum")
    mantissa, exponent = np.frexp(values)
    integers = np.ldexp(mantissa, 53).astype(np.int64)
    low = int(exponent.min())
    span = int(exponent.max()) - low + 1  # IoUs, in [0.1, 1]: at most 5 exponents
    bins = groups * span + (exponent - low)
    for piece in range(3):
        part = (integers >> (piece * PIECE_BITS)) & ((1 << PIECE_BITS) - 1)
        sums = np.bincount(bins, weights=part.astype(np.float64), minlength=n_groups * span)
        present = np.flatnonzero(sums)
        group, offset = np.divmod(present, span)
        shifts = offset + (low + SHIFT + piece * PIECE_BITS)
        for g, total, shift in zip(group.tolist(), sums[present].tolist(), shifts.tolist(), strict=True):
            totals[g] += int(total) << shift
    return totals


def _narrow_sum(values: FloatArray) -> int | None:
    """Σ values · 2**SCALE_BITS when the exponents span at most NARROW_SPAN (IoUs in [0.1, 1]: 4),
    else None: every mantissa is shifted to the lowest exponent and still fits an int64, and the
    integers are summed in two halves of HALF_BITS, a plain integer sum each (one group, no bins).
    """
    if not len(values) or not np.isfinite(values).all():
        return None
    mantissa, exponent = np.frexp(values)
    low = int(exponent.min())
    if int(exponent.max()) - low > NARROW_SPAN:
        return None
    common = np.ldexp(mantissa, 53 + (exponent - low)).astype(np.int64)
    high, rest = int((common >> HALF_BITS).sum()), int((common & ((1 << HALF_BITS) - 1)).sum())
    return ((high << HALF_BITS) + rest) << (low + SHIFT)


class ExactSum(msgspec.Struct, frozen=True):
    """How many values, and their sum as an exact integer multiple of 2**-SCALE_BITS."""

    scaled: int = 0
    count: int = 0

    @classmethod
    def of(cls, values: FloatArray) -> ExactSum:
        values = np.asarray(values, dtype=np.float64)
        scaled = _narrow_sum(values)
        if scaled is None:
            scaled = _exact_integers(values, np.zeros(len(values), dtype=np.int64), 1)[0]
        return cls(scaled, len(values))

    @classmethod
    def per_group(cls, values: FloatArray, groups: IntArray, n_groups: int) -> list[ExactSum]:
        """One sum per group (`groups[i]` in [0, n_groups) is the group of `values[i]`)."""
        values = np.asarray(values, dtype=np.float64)
        counts = np.bincount(groups, minlength=n_groups).tolist()
        scaled = _exact_integers(values, groups, n_groups)
        return [cls(total, count) for total, count in zip(scaled, counts, strict=True)]

    def __add__(self, other: ExactSum) -> ExactSum:
        return ExactSum(self.scaled + other.scaled, self.count + other.count)

    @property
    def total(self) -> float:
        """The correctly rounded sum (equal to `math.fsum` of every value added)."""
        return float(Fraction(self.scaled, 1 << SCALE_BITS))

    @property
    def mean(self) -> float | None:
        return self.total / self.count if self.count else None
