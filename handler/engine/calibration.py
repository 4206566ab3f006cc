"""Seconds per labeler action fitted from a labeling tool's log: pure numpy.

Two shapes of log, two fits:
- per task, the action counts and the task's time (Label Studio's `lead_time`): non-negative
  least squares, time ≈ overhead + Σ counts · seconds, so each action's share of a task's time
  is estimated from how the counts vary between tasks;
- per action, its own duration (CVAT's events): the mean over the actions.

Both bootstrap over tasks (the resampling unit, as the score's bootstrap resamples images), with
the draws of `engine.bootstrap.resample_times`. An action that too few tasks show cannot be
estimated: it keeps its default, is held fixed in the fit, and its interval is that default.
"""

from __future__ import annotations

from typing import Final

import msgspec
import numpy as np

from handler.boxes import BoolArray, FloatArray, IntArray
from handler.engine.bootstrap import RESAMPLES, SEED, percentile_ends, resample_times
from handler.engine.counts import OutcomeCounts
from handler.engine.timecost import ACTIONS, TimeCosts

# An action needs this many tasks that show it before its seconds are fitted: below, its share
# of the task times is too small a signal against the other actions' noise.
MIN_SUPPORT: Final = 30


class Fitted(msgspec.Struct, frozen=True):
    """Seconds per action in ACTIONS order, with their bootstrap, and how well the fit explains the log."""

    seconds: FloatArray  # (n_actions,)
    support: IntArray  # (n_actions,) tasks that show the action at least once
    replicates: FloatArray  # (resamples, n_actions) the seconds of every bootstrap resample
    tasks: int
    overhead: float | None = None  # seconds per task besides the actions (lead-time fit only)
    r2: float | None = None  # share of the variance of the task times the fit explains
    rmse: float | None = None  # seconds, root mean squared residual of a task's time

    @property
    def fitted(self) -> BoolArray:
        """(n_actions,) False where too few tasks show the action, so its default was kept."""
        return ~_kept(self.support)

    @property
    def intervals(self) -> FloatArray:
        """(2, n_actions) the 95 % percentile ends of the replicates; a kept default's are itself."""
        return percentile_ends(self.replicates) if len(self.replicates) else np.tile(self.seconds, (2, 1))


def nnls(gram: FloatArray, target: FloatArray) -> FloatArray:
    """argmin |Ax - b|² over x >= 0, given G = AᵀA (k, k) and h = Aᵀb (k,): Lawson-Hanson active set.

    Works on the normal equations, so a bootstrap resample is a weighted Gram matrix, not a copy
    of the rows. Small k (here 6): each step solves the passive set's k-by-k system.
    """
    k = len(target)
    tolerance = 1e-10 * max(1.0, float(np.abs(target).max(initial=0.0)), float(np.abs(gram).max(initial=0.0)))
    x: FloatArray = np.zeros(k)
    passive = np.zeros(k, dtype=bool)
    for _ in range(3 * k):
        gradient = target - gram @ x
        if passive.all() or gradient[~passive].max() <= tolerance:
            break
        passive[np.argmax(np.where(passive, -np.inf, gradient))] = True
        while True:
            # 1. The unconstrained optimum on the passive set.
            z: FloatArray = np.zeros(k)
            index = np.flatnonzero(passive)
            z[index] = np.linalg.lstsq(gram[np.ix_(index, index)], target[index], rcond=None)[0]
            if (z[index] > tolerance).all():
                x = z
                break
            # 2. Step from x towards z until the first passive variable reaches 0; it leaves the set.
            leaving = passive & (z <= tolerance)
            step = float(np.min(x[leaving] / (x[leaving] - z[leaving])))
            x = x + step * (z - x)
            passive &= x > tolerance
            x[~passive] = 0.0
    return x


def _seconds(costs: TimeCosts) -> FloatArray:
    """The seconds of `costs` in ACTIONS order (the order of `to_dict`, Outcome's)."""
    return np.asarray(list(costs.to_dict().values()), dtype=np.float64)


def _costs(seconds: FloatArray) -> TimeCosts:
    return TimeCosts.from_document({"seconds": dict(zip(ACTIONS, seconds.tolist(), strict=True))})


def _with_overhead(counts: IntArray) -> FloatArray:
    """(n, k + 1) design: the action counts and a column of ones for the per-task overhead."""
    return np.hstack([counts.astype(np.float64), np.ones((len(counts), 1))])


def _kept(support: IntArray) -> BoolArray:
    kept: BoolArray = support < MIN_SUPPORT
    return kept


def fit_task_times(
    counts: IntArray, seconds: FloatArray, defaults: TimeCosts, resamples: int = RESAMPLES, seed: int = SEED
) -> Fitted:
    """Seconds per action from per-task action counts (n, n_actions) and task times (n,).

    Actions with fewer than MIN_SUPPORT tasks keep their default: their seconds are taken out of
    the task times first, so the other actions do not absorb them.
    """
    support = np.count_nonzero(counts, axis=0).astype(np.int64)
    kept = _kept(support)
    base = _seconds(defaults)
    residual_times = seconds - OutcomeCounts(counts).labeler_seconds(_costs(np.where(kept, base, 0.0)))
    design = _with_overhead(counts[:, ~kept])
    solution = nnls(design.T @ design, design.T @ residual_times)
    per_action = base.copy()
    per_action[~kept] = solution[:-1]
    replicates = _resampled_fits(design, residual_times, resamples, seed)
    all_replicates = np.tile(base, (len(replicates), 1))
    all_replicates[:, ~kept] = replicates[:, :-1]
    predicted = OutcomeCounts(counts).labeler_seconds(_costs(per_action)) + solution[-1]
    return Fitted(
        seconds=per_action,
        support=support,
        replicates=all_replicates,
        tasks=len(counts),
        overhead=float(solution[-1]),
        r2=_r2(seconds, predicted),
        rmse=float(np.sqrt(np.mean((seconds - predicted) ** 2))) if len(seconds) else None,
    )


def _resampled_fits(design: FloatArray, times: FloatArray, resamples: int, seed: int) -> FloatArray:
    """(resamples, k) NNLS solutions of bootstrap resamples of the rows.

    A resample weights row i by how often it was drawn (t): its Gram matrix is Σ tᵢ xᵢxᵢᵀ, one
    product of the draw counts with the rows' outer products for a whole chunk of resamples.
    """
    n, k = design.shape
    outer = (design[:, :, None] * design[:, None, :]).reshape(n, k * k)
    weighted_targets = design * times[:, None]
    solutions = np.zeros((resamples, k))
    for chunk, drawn in resample_times(n, resamples, seed):
        grams = (drawn @ outer).reshape(-1, k, k)
        targets = drawn @ weighted_targets
        solutions[chunk] = [nnls(gram, target) for gram, target in zip(grams, targets, strict=True)]
    return solutions


def _r2(observed: FloatArray, predicted: FloatArray) -> float | None:
    spread = float(np.sum((observed - observed.mean()) ** 2)) if len(observed) else 0.0
    return 1.0 - float(np.sum((observed - predicted) ** 2)) / spread if spread > 0 else None


def fit_action_durations(
    action: IntArray,
    seconds: FloatArray,
    occurrences: IntArray,
    task: IntArray,
    tasks: int,
    defaults: TimeCosts,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Fitted:
    """Seconds per action as total seconds / occurrences: each timed record (m,) has its action
    (an index into ACTIONS), seconds, how many actions it covers and its task (0..tasks-1)."""
    n_actions = len(ACTIONS)
    cell = task * n_actions + action
    totals = np.bincount(cell, weights=seconds, minlength=tasks * n_actions).reshape(tasks, n_actions)
    counted = np.bincount(cell, weights=occurrences, minlength=tasks * n_actions).reshape(tasks, n_actions)
    support = np.count_nonzero(counted, axis=0).astype(np.int64)
    kept = _kept(support)
    base = _seconds(defaults)
    replicates = np.tile(base, (resamples, 1))
    for chunk, drawn in resample_times(tasks, resamples, seed):
        replicates[chunk] = _means(drawn @ totals, drawn @ counted, base, kept)
    per_action = _means(totals.sum(axis=0), counted.sum(axis=0), base, kept)
    return Fitted(seconds=per_action, support=support, replicates=replicates, tasks=tasks)


def _means(totals: FloatArray, occurrences: FloatArray, base: FloatArray, kept: BoolArray) -> FloatArray:
    """Total seconds / occurrences per action; the default where kept or where nothing was drawn."""
    usable = ~kept & (occurrences > 0)
    means: FloatArray = np.where(usable, totals / np.where(usable, occurrences, 1.0), base)
    return means
