"""The registered analyses: each runs on every shard, and its partial is merged into the state.

A new analysis is one module in this package (its partial, per-shard function and merge)
and one line in `ANALYSES`; its findings section reads it with `state.of(ANALYSIS)`. One that
only `compare` reads goes in `COMPARE_ONLY` instead: a node run does not pay for it.
"""

from __future__ import annotations

from typing import Any, Final

from handler.engine.analyses.box_counts import BOX_COUNTS
from handler.engine.analyses.by_size import BY_SIZE
from handler.engine.analyses.confidence_bins import CONFIDENCE_BINS
from handler.engine.analyses.confidence_sweep import CONFIDENCE_SWEEP
from handler.engine.analyses.confusions import CONFUSIONS
from handler.engine.analyses.data_health import DATA_HEALTH
from handler.engine.analyses.gt_errors import GT_ERRORS
from handler.engine.analyses.image_classes import IMAGE_CLASSES
from handler.engine.analyses.near_misses import NEAR_MISSES
from handler.engine.analyses.per_class import PER_CLASS
from handler.engine.analyses.per_image import PER_IMAGE
from handler.engine.plugin import Analysis

ANALYSES: Final[tuple[Analysis[Any], ...]] = (
    BOX_COUNTS,
    PER_IMAGE,
    PER_CLASS,
    CONFUSIONS,
    CONFIDENCE_SWEEP,
    CONFIDENCE_BINS,
    BY_SIZE,
    NEAR_MISSES,
    GT_ERRORS,
    DATA_HEALTH,
)
# Run on compare's shards besides `ANALYSES`: the per-class paired intervals read them.
COMPARE_ONLY: Final[tuple[Analysis[Any], ...]] = (IMAGE_CLASSES,)
