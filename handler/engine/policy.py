"""The merged run's recommended policy (engine/routing.py over the confidence sweep), and the
spread of the time it saves: the recommendation's section, its finisher, routing.json and
`export` all read this one."""

from __future__ import annotations

import math

import msgspec
import numpy as np
from msgspec import field

from handler.boxes import FloatArray, IntArray
from handler.engine import routing as engine_routing
from handler.engine.analyses.confidence_sweep import CONFIDENCE_SWEEP
from handler.engine.bootstrap import LEVEL, percentile_interval, resampled_counts
from handler.engine.counts import OutcomeCounts
from handler.engine.outcomes import N_OUTCOMES
from handler.engine.routing import DRAW, RoutingPolicy
from handler.engine.state import EvaluationState
from handler.engine.timecost import TimeCosts


class Policy(msgspec.Struct, frozen=True):
    """The merged run's recommendation: the engine's policy and what it is over."""

    routing: RoutingPolicy
    thresholds: list[float]  # the sweep's
    class_names: tuple[str, ...]
    class_counts: IntArray  # (n_classes, n_thresholds, 5)

    @property
    def single(self) -> float:
        return self.thresholds[self.routing.best_single]

    def threshold_of(self, row: int) -> float | None:
        choice = int(self.routing.choice[row])
        return None if choice == DRAW else self.thresholds[choice]

    def boxed_rows(self) -> IntArray:
        """The classes with a box at some threshold, in the class order."""
        return np.flatnonzero(self.class_counts.sum(axis=(1, 2)) > 0)

    def thresholds_by_name(self) -> dict[str, float]:
        """Each class the policy knows: its threshold, +inf to draw it."""
        return {
            name: math.inf if (t := self.threshold_of(row)) is None else t
            for row, name in enumerate(self.class_names)
        }


def policy_of(state: EvaluationState, used_threshold: float, costs: TimeCosts) -> Policy:
    swept = state.of(CONFIDENCE_SWEEP)
    thresholds = [point.threshold for point in swept.sweep.points]
    counts = swept.by_class.counts
    used = swept.sweep.column(used_threshold)
    return Policy(engine_routing.route(counts, used, costs), thresholds, tuple(swept.by_class.names), counts)


def _no_counts() -> IntArray:
    return np.zeros((0, N_OUTCOMES), dtype=np.int64)


class Spread(msgspec.Struct, frozen=True):
    """The finisher's data: outcome counts under the policy on a seeded sample of the images, and
    at the threshold given on the same images (the gain's interval is paired)."""

    counts: IntArray = field(default_factory=_no_counts)
    images: int = 0  # every scored image (the sample is of them)
    used: IntArray = field(default_factory=_no_counts)


def intervals(
    spread: Spread, saved: float, gain: float, costs: TimeCosts
) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """The 95 % intervals of the time the policy saves over the images and of its gain over the
    threshold given, from one bootstrap of the sample's per-image counts (the draws depend on the
    images only, so the policy's columns are what a bootstrap of them alone would sum): each the
    resamples' spread scaled to all the images, around the exact figure. The gain's is paired (the
    same draws under both, so the images' own difficulty leaves it); None where there is no sample."""
    policy, used = spread.counts, spread.used
    if not len(policy):
        return None, None
    paired = used.shape == policy.shape
    summed = resampled_counts(np.hstack((policy, used)) if paired else policy)
    split = policy.shape[1]
    under = OutcomeCounts(summed[:, :split]).seconds_saved(costs)
    centre = float(OutcomeCounts(policy.sum(axis=0)).seconds_saved(costs))
    saved_within = _scaled_interval(under - centre, saved, spread.images, len(policy))
    if not paired:
        return saved_within, None
    resampled = under - OutcomeCounts(summed[:, split:]).seconds_saved(costs)
    exact = OutcomeCounts(np.stack((policy.sum(axis=0), used.sum(axis=0)))).seconds_saved(costs)
    gain_within = _scaled_interval(resampled - float(exact[0] - exact[1]), gain, spread.images, len(policy))
    return saved_within, gain_within


def _scaled_interval(deviations: FloatArray, value: float, images: int, sampled: int) -> tuple[float, float]:
    """The 95 % interval around `value` of a total over `images`, from the resampled deviations of
    its sample of `sampled` images: a total's spread grows as the square root of the images."""
    low, high = percentile_interval(deviations, LEVEL)
    scale = math.sqrt(images / sampled)
    return value + low * scale, value + high * scale
