"""The engine's own analyses: what every run reads of every shard whatever the page shows (box
counts, per-image outcomes, confidence bins, data health), and the partials that more than one
place reads (the per-class counts, the confusions, the GT suspects, the near misses, the
confidence sweep: the readings, compare, the policy and the sketches read them too). A partial
that only its own feature reads lives in its folder (handler/features/). One that only `compare`
reads goes in `COMPARE_ONLY`: a node run does not pay for it.
"""

from __future__ import annotations

from typing import Any, Final

from handler.engine.analyses.box_counts import BOX_COUNTS
from handler.engine.analyses.confidence_bins import CONFIDENCE_BINS
from handler.engine.analyses.confidence_sweep import CONFIDENCE_SWEEP
from handler.engine.analyses.confusions import CONFUSIONS
from handler.engine.analyses.data_health import DATA_HEALTH
from handler.engine.analyses.gt_errors import GT_ERRORS
from handler.engine.analyses.gt_outcomes import GT_OUTCOMES
from handler.engine.analyses.image_classes import IMAGE_CLASSES
from handler.engine.analyses.near_misses import NEAR_MISSES
from handler.engine.analyses.per_class import PER_CLASS
from handler.engine.analyses.per_image import PER_IMAGE
from handler.engine.plugin import Analysis

# What every shard runs before the features' own partials.
CORE: Final[tuple[Analysis[Any], ...]] = (
    BOX_COUNTS,
    PER_IMAGE,
    CONFIDENCE_BINS,
    DATA_HEALTH,
    CONFUSIONS,
    GT_ERRORS,
    NEAR_MISSES,
    PER_CLASS,
    CONFIDENCE_SWEEP,
)
# Run on compare's shards besides the registered ones: the per-class paired intervals and the box
# transitions read them.
COMPARE_ONLY: Final[tuple[Analysis[Any], ...]] = (IMAGE_CLASSES, GT_OUTCOMES)
