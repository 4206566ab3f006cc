"""`prelabel-eval calibrate`: a team's own seconds per action, fitted from its labeling tool's logs.

Reading a log is a datasets concern (handler/datasets/logs/: one module per tool, detected from
the content); the fit is the engine's (engine/calibration.py, pure numpy); this module joins
them and says whose seconds they are (`CostFit`), which is what `--time-costs` carries onto the
page. It sits with the other entry points because it does both.
"""

from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from handler.datasets.logs import ActionTimes, LabelerLog, TaskTimes, read_log
from handler.engine.calibration import MIN_SUPPORT, Fitted, fit_action_durations, fit_task_times
from handler.engine.timecost import ACTIONS, ActionFit, CostFit, Shape, TimeCosts
from handler.errors import InputError


def calibrate(
    paths: Sequence[str],
    defaults: TimeCosts | None = None,
    today: datetime.date | None = None,
    shape: Shape | None = None,
) -> TimeCosts:
    """The seconds the logs at `paths` (one tool's) support; the others keep `defaults`. `shape`
    is what the labelers drew where the logs cannot say (CVAT's events), else the logs' own."""
    if not paths:
        raise InputError("expected at least one log: a Label Studio JSON export or a CVAT events CSV")
    defaults = defaults or TimeCosts()
    logs = [read_log(path) for path in paths]
    formats = sorted({log.log_format for log in logs})
    if len(formats) > 1:
        raise InputError(f"expected the logs of one tool, got {' and '.join(formats)}: calibrate them apart")
    shapes = [shape] if shape else sorted({log.shape for log in logs})
    if len(shapes) > 1:
        raise InputError(f"expected the logs of one shape, got {' and '.join(shapes)}: calibrate them apart")
    if shapes == ["masks"]:  # a mask's seconds: the actions the log cannot show keep a mask's defaults
        defaults = defaults.on_masks()
    fitted = _fit(logs, defaults)
    skipped = dict(sum((Counter(log.skipped) for log in logs), Counter[str]()))
    assumed = dict(sum((Counter(log.assumed) for log in logs), Counter[str]()))
    if not fitted.tasks:
        why = ", ".join(f"{n} {reason}" for reason, n in sorted(skipped.items())) or "it is empty"
        raise InputError(f"{', '.join(paths)}: no {logs[0].unit} to fit the seconds on (skipped: {why})")
    seconds = dict(zip(ACTIONS, fitted.seconds.tolist(), strict=True))
    fit = CostFit(
        files=tuple(Path(path).name for path in paths),
        log_format=formats[0],
        tasks=fitted.tasks,
        unit=logs[0].unit,
        date=(today or datetime.datetime.now(datetime.timezone.utc).date()).isoformat(),
        actions={
            action: ActionFit((float(low), float(high)), int(support), bool(was_fitted))
            for action, low, high, support, was_fitted in zip(
                ACTIONS, *fitted.intervals, fitted.support, fitted.fitted, strict=True
            )
        },
        replicates=fitted.replicates,
        skipped=skipped,
        assumed=assumed,
        overhead_seconds=fitted.overhead,
        r2=fitted.r2,
        rmse_seconds=fitted.rmse,
        shape=shapes[0],
    )
    return TimeCosts(**seconds, fit=fit, shape=shapes[0])


def _fit(logs: list[LabelerLog], defaults: TimeCosts) -> Fitted:
    task_times = [log.times for log in logs if isinstance(log.times, TaskTimes)]
    if task_times:
        counts = np.column_stack(
            [np.concatenate([times.counts[action] for times in task_times]) for action in ACTIONS]
        )
        return fit_task_times(counts, np.concatenate([times.seconds for times in task_times]), defaults)
    action_times = [log.times for log in logs if isinstance(log.times, ActionTimes)]
    offsets = np.cumsum([0] + [times.tasks for times in action_times])
    parts = [
        (np.full(len(times.seconds.get(action, ())), code), times, action, offset)
        for times, offset in zip(action_times, offsets, strict=False)
        for code, action in enumerate(ACTIONS)
        if action in times.seconds
    ]
    return fit_action_durations(
        np.concatenate([codes for codes, *_ in parts]).astype(np.int64),
        np.concatenate([times.seconds[action] for _, times, action, _ in parts]),
        np.concatenate([times.occurrences[action] for _, times, action, _ in parts]),
        np.concatenate([times.task[action] + offset for _, times, action, offset in parts]).astype(np.int64),
        int(offsets[-1]),
        defaults,
    )


def calibration_lines(costs: TimeCosts) -> list[str]:
    """The fit as a person reads it: each action's seconds, interval and support, then its quality."""
    fit = costs.fit
    if fit is None:
        return [f"{action} {getattr(costs, action):g} s" for action in ACTIONS]
    skipped = ", ".join(f"{n} {why}" for why, n in sorted(fit.skipped.items()))
    assumed = ", ".join(f"{n} {how}" for how, n in sorted(fit.assumed.items()))
    lines = [
        f"{fit.source} ({fit.log_format}{', masks' if costs.shape == 'masks' else ''})"
        + (f"; skipped: {skipped}" if skipped else "")
        + (f"; taken: {assumed}" if assumed else "")
    ]
    lines.append(f"{'action':<8} {'seconds':>8}  {'95% interval':<15} {fit.unit:>6}")
    for action in ACTIONS:
        item, seconds = fit.actions[action], getattr(costs, action)
        if item.fitted:
            low, high = item.interval
            lines.append(f"{action:<8} {seconds:>8.2f}  {f'{low:.2f}-{high:.2f}':<15} {item.support:>6}")
        else:
            lines.append(
                f"{action:<8} {seconds:>8.2f}  {'default kept':<15} {item.support:>6}  "
                f"(fewer than {MIN_SUPPORT} {fit.unit} show it)"
            )
    each = fit.unit.rstrip("s")
    if fit.overhead_seconds is not None:
        lines.append(f"overhead per {each}: {fit.overhead_seconds:.2f} s (opening it, looking it over)")
    if fit.r2 is not None and fit.rmse_seconds is not None:
        lines.append(f"fit: R² {fit.r2:.3f}, residual {fit.rmse_seconds:.2f} s per {each} (RMSE)")
    return lines
