"""When another reading scores clearly better: the gain and its paired bootstrap.

"Clearly better" is a gain in assistance score of at least MIN_GAIN and at least MIN_RATIO of the
score as read (an effect a labeling lead would act on, also for a weak model's low score),
whose paired bootstrap over images (the report's resampling: the same draws for both readings,
so the images' shared difficulty leaves the interval) stays at or above MIN_LOW_END at the
99 % level: a margin above 0 that chance on the images cannot give.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Final

import msgspec
import numpy as np

from handler.boxes import IntArray
from handler.engine.bootstrap import RESAMPLES, SEED, percentile_interval, resampled_counts
from handler.engine.counts import OutcomeCounts
from handler.readings.reading import Combined

MIN_GAIN: Final = 0.02
MIN_RATIO: Final = 0.1
MIN_LOW_END: Final = 0.01
LEVEL: Final = Fraction(99, 100)


class Gain(msgspec.Struct, frozen=True):
    """Score under the reading minus score as read, and its paired 99 % interval."""

    value: float
    low: float
    high: float

    def clear(self, as_read: float) -> bool:
        """Clearly better than `as_read`, the score of the rows as read."""
        return self.value >= max(MIN_GAIN, MIN_RATIO * as_read) and self.low >= MIN_LOW_END


class Rescored(msgspec.Struct, frozen=True):
    """A reading that scores clearly better, on all `images` shared images."""

    reading: Combined
    images: int
    as_read: OutcomeCounts  # (N_OUTCOMES,) summed over the images
    under: OutcomeCounts
    gain: Gain
    tried: int  # candidate readings re-scored


def paired_gain(as_read: IntArray, under: IntArray) -> Gain:
    summed = resampled_counts(np.hstack((as_read, under)), RESAMPLES, SEED)
    split = as_read.shape[1]
    resampled = OutcomeCounts(summed[:, split:]).scores - OutcomeCounts(summed[:, :split]).scores
    low, high = percentile_interval(resampled, LEVEL)
    value = OutcomeCounts(under.sum(axis=0)).score - OutcomeCounts(as_read.sum(axis=0)).score
    return Gain(value, low, high)
