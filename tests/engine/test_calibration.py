"""The fit of seconds per action (engine/calibration.py): NNLS against an exhaustive reference,
the lead-time fit and the duration means on logs whose truth is known."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from handler.engine.calibration import MIN_SUPPORT, fit_action_durations, fit_task_times, nnls
from handler.engine.timecost import ACTIONS, TimeCosts

DEFAULTS = TimeCosts()


def exhaustive_nnls(design: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The NNLS optimum by brute force: the best least-squares solution on every subset of the
    columns whose solution is non-negative (KKT: the optimum is one of them)."""
    k = design.shape[1]
    best, best_cost = np.zeros(k), float(np.sum(target**2))
    for size in range(1, k + 1):
        for subset in itertools.combinations(range(k), size):
            x = np.zeros(k)
            x[list(subset)] = np.linalg.lstsq(design[:, subset], target, rcond=None)[0]
            cost = float(np.sum((design @ x - target) ** 2))
            if (x >= 0).all() and cost < best_cost - 1e-12:
                best, best_cost = x, cost
    return best


@pytest.mark.parametrize("seed", range(40))
def test_nnls_finds_the_exhaustive_optimum(seed: int) -> None:
    rng = np.random.default_rng(seed)
    design = rng.normal(size=(30, 6))
    target = rng.normal(size=30) * (1 + seed % 3)
    found = nnls(design.T @ design, design.T @ target)
    assert (found >= 0).all()
    np.testing.assert_allclose(found, exhaustive_nnls(design, target), atol=1e-7)


def test_nnls_of_a_hand_case() -> None:
    # min (x - 2)² + (y + 1)² over x, y >= 0: x = 2, y = 0.
    design, target = np.eye(2), np.array([2.0, -1.0])
    np.testing.assert_allclose(nnls(design.T @ design, design.T @ target), [2.0, 0.0])


def simulated_counts(n: int, seed: int, rates: list[float]) -> np.ndarray:
    return np.random.default_rng(seed).poisson(rates, size=(n, len(ACTIONS))).astype(np.int64)


TRUE_SECONDS = np.array([2.0, 7.0, 5.0, 3.0, 22.0])


def test_the_lead_time_fit_recovers_known_seconds_with_intervals_around_them() -> None:
    counts = simulated_counts(800, 1, [4, 1.5, 0.8, 1, 1.2])
    rng = np.random.default_rng(2)
    times = counts @ TRUE_SECONDS + 4.0 + rng.normal(0, 2.0, len(counts))
    fitted = fit_task_times(counts, times, DEFAULTS, resamples=300)
    np.testing.assert_allclose(fitted.seconds, TRUE_SECONDS, rtol=0.1)
    assert fitted.fitted.all() and fitted.tasks == 800
    assert fitted.overhead == pytest.approx(4.0, abs=1.0)
    low, high = fitted.intervals
    assert (low <= fitted.seconds).all() and (fitted.seconds <= high).all()
    assert (high - low < 0.2 * TRUE_SECONDS).all()  # 800 tasks pin each action within ±10 %
    assert fitted.r2 is not None and fitted.r2 > 0.98
    assert fitted.rmse == pytest.approx(2.0, rel=0.15)
    assert fitted.replicates.shape == (300, len(ACTIONS))


def test_an_action_too_few_tasks_show_keeps_its_default_and_the_others_do_not_absorb_it() -> None:
    counts = simulated_counts(400, 3, [4, 1.5, 0, 1, 1.2])
    relabel = ACTIONS.index("relabel")
    counts[: MIN_SUPPORT - 1, relabel] = 1  # one short of the support a fit needs
    times = counts @ np.where(np.arange(5) == relabel, DEFAULTS.relabel, TRUE_SECONDS) + 4.0
    fitted = fit_task_times(counts, times, DEFAULTS, resamples=100)
    assert fitted.support[relabel] == MIN_SUPPORT - 1 and not fitted.fitted[relabel]
    assert fitted.seconds[relabel] == DEFAULTS.relabel
    assert (fitted.intervals[:, relabel] == DEFAULTS.relabel).all()
    others = np.arange(5) != relabel
    np.testing.assert_allclose(fitted.seconds[others], TRUE_SECONDS[others], rtol=1e-6)


def test_the_duration_means_of_a_hand_case() -> None:
    # Task 0: two draws of 20 s and 30 s; task 1: one delete event covering 2 deletes in 6 s.
    draw, delete = ACTIONS.index("draw"), ACTIONS.index("delete")
    fitted = fit_action_durations(
        action=np.array([draw, draw, delete]),
        seconds=np.array([20.0, 30.0, 6.0]),
        occurrences=np.array([1, 1, 2]),
        task=np.array([0, 0, 1]),
        tasks=2,
        defaults=DEFAULTS,
        resamples=50,
    )
    assert fitted.support.tolist() == [0, 0, 0, 1, 1]
    # Too few tasks for any action: every default kept, even where there were events.
    assert not fitted.fitted.any() and fitted.seconds.tolist() == list(DEFAULTS.to_dict().values())


def test_the_duration_means_recover_known_seconds() -> None:
    rng = np.random.default_rng(4)
    tasks, per_task = 200, 12
    action = rng.integers(0, 5, size=tasks * per_task)
    seconds = TRUE_SECONDS[action] * rng.uniform(0.5, 1.5, size=len(action))
    task = np.repeat(np.arange(tasks), per_task)
    fitted = fit_action_durations(action, seconds, np.ones_like(action), task, tasks, DEFAULTS, resamples=200)
    assert fitted.fitted.all()
    np.testing.assert_allclose(fitted.seconds, TRUE_SECONDS, rtol=0.06)
    low, high = fitted.intervals
    assert (low < TRUE_SECONDS).all() and (high > TRUE_SECONDS).all()
