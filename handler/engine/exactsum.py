"""A sum of float64 values held exactly, so that shards add up to the one-shot result bit for bit.

Every finite double is an integer multiple of 2**-1074; the sum is kept as that integer
(a Python int), so adding two sums is exact, associative and order-independent, and the
float it gives is the correctly rounded sum (what `math.fsum` of all the values returns).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Final

import numpy as np

from handler.boxes import FloatArray

# value = mantissa_int * 2**(exponent - 53) = mantissa_int * 2**(exponent + SHIFT) / 2**SCALE_BITS
SCALE_BITS: Final = 1127
SHIFT: Final = SCALE_BITS - 53
# Mantissas (< 2**53) are summed in three 18-bit pieces: a float64 bincount of pieces below
# 2**18 stays an exact integer for up to 2**35 values.
PIECE_BITS: Final = 18


def _exact_integer(values: FloatArray) -> int:
    """Σ values · 2**SCALE_BITS, exactly, without a Python loop per value."""
    if not len(values):
        return 0
    if not np.isfinite(values).all():
        raise ValueError("Expected finite values for an exact sum")
    mantissa, exponent = np.frexp(values)
    integers = np.ldexp(mantissa, 53).astype(np.int64)
    low = int(exponent.min())
    bins = exponent - low  # few distinct exponents for values of one kind (IoUs: about 4)
    total = 0
    for piece in range(3):
        part = (integers >> (piece * PIECE_BITS)) & ((1 << PIECE_BITS) - 1)
        sums = np.bincount(bins, weights=part.astype(np.float64))
        for offset in np.flatnonzero(sums).tolist():
            total += int(sums[offset]) << (low + offset + SHIFT + piece * PIECE_BITS)
    return total


@dataclass(frozen=True)
class ExactSum:
    """How many values, and their sum as an exact integer multiple of 2**-SCALE_BITS."""

    scaled: int = 0
    count: int = 0

    @classmethod
    def of(cls, values: FloatArray) -> ExactSum:
        return cls(_exact_integer(np.asarray(values, dtype=np.float64)), len(values))

    def __add__(self, other: ExactSum) -> ExactSum:
        return ExactSum(self.scaled + other.scaled, self.count + other.count)

    @property
    def total(self) -> float:
        """The correctly rounded sum (equal to `math.fsum` of every value added)."""
        return float(Fraction(self.scaled, 1 << SCALE_BITS))

    @property
    def mean(self) -> float | None:
        return self.total / self.count if self.count else None
