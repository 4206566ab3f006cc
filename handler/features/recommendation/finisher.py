"""The recommendation's intervals: the policy and the threshold given applied to a seeded sample
of the images, in the one exact pass (the `recommendation` section scales the sample's spread to
every image, and pairs the two for the gain)."""

from __future__ import annotations

import math
from typing import Final

import numpy as np

from handler.engine.analyses.per_image import PER_IMAGE
from handler.engine.bootstrap import seeded_sample
from handler.engine.policy import Spread
from handler.engine.routing import counts_under_policy
from handler.sections.finishing import ExactPass, Finished, Finisher, Finishing, Merged

# Images the interval's spread is measured on: the bootstrap of 500 images gives the spread of a
# total to a few percent, at the cost of an evaluation of 500 images.
SAMPLE_IMAGES: Final = 500


def sampled_images(merged: Merged) -> frozenset[str]:
    """Up to SAMPLE_IMAGES scored images, drawn once (seeded): all of them when there are no more."""
    if merged.state.tally.total == 0:
        return frozenset()
    asset_ids = merged.state.of(PER_IMAGE).asset_ids
    return frozenset(asset_ids[row] for row in seeded_sample(len(asset_ids), SAMPLE_IMAGES).tolist())


def _spread(finishing: Finishing) -> Finished:
    merged = finishing.merged
    if not finishing.chosen:
        return Finished()
    thresholds, single = merged.policy.thresholds_by_name(), merged.policy.single
    rows = []
    for passed in finishing.images.shards:
        wanted = [i for i, asset in enumerate(passed.paired.asset_ids) if asset in finishing.chosen]
        if not wanted:
            continue
        per_class = np.array(
            [thresholds.get(name, single) for name in passed.paired.class_names] or [math.inf]
        )
        given = np.full(len(per_class), merged.inputs.confidence.value)
        counts, used = (
            counts_under_policy(
                passed.evaluation, each, merged.inputs.thresholds, len(passed.paired.asset_ids)
            )
            for each in (per_class, given)
        )
        rows.append((counts[wanted], used[wanted]))
    if not rows:
        return Finished(data=Spread())
    counts, used = (np.concatenate(column) for column in zip(*rows, strict=True))
    return Finished(data=Spread(counts, len(merged.state.of(PER_IMAGE).asset_ids), used))


RECOMMENDATION_SPREAD: Final = Finisher("recommendation spread", ExactPass(sampled_images), _spread)
