"""The engine's own analyses: what every run reads of every shard whatever the page shows (box
counts, per-image outcomes, confidence bins, data health); a feature's own partial lives in its
folder (handler/features/). One that only `compare` reads goes in `COMPARE_ONLY`: a node run does
not pay for it.
"""

from __future__ import annotations

from typing import Any, Final

from handler.engine.analyses.box_counts import BOX_COUNTS
from handler.engine.analyses.confidence_bins import CONFIDENCE_BINS
from handler.engine.analyses.data_health import DATA_HEALTH
from handler.engine.analyses.gt_outcomes import GT_OUTCOMES
from handler.engine.analyses.image_classes import IMAGE_CLASSES
from handler.engine.analyses.per_image import PER_IMAGE
from handler.engine.plugin import Analysis

# The engine's own analyses: what the run, the review queue and the warnings read of every shard.
CORE: Final[tuple[Analysis[Any], ...]] = (BOX_COUNTS, PER_IMAGE, CONFIDENCE_BINS, DATA_HEALTH)
# Run on compare's shards besides the registered ones: the per-class paired intervals and the box
# transitions read them.
COMPARE_ONLY: Final[tuple[Analysis[Any], ...]] = (IMAGE_CLASSES, GT_OUTCOMES)
