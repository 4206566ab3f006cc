"""The progress bar of `prelabel-eval`: rich's, on an interactive terminal only, on stderr.

It is drawn once a run has taken `delay` seconds (short runs show nothing), redrawn by rich's
own refresh thread (so the elapsed time moves while one long phase runs), and erased when the
run ends. It is a phase log: told when each phase starts and ends, it shows the phase, how many
are done and the elapsed time, and hands each end on to the log it wraps, so the phase records
of the "prelabel" logger are the same with a bar or without.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Final

from rich.console import Console, RenderableType
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from handler.pipeline import PhaseLog

DELAY: Final = 2.0  # seconds before the bar first appears


class _DelayedProgress(Progress):
    """rich's Progress, drawing nothing until `delay` seconds have passed."""

    def __init__(self, console: Console, delay: float) -> None:
        # Set before rich's constructor: it renders once while it builds its live display.
        self._shown_from = time.monotonic() + delay
        super().__init__(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )

    def get_renderables(self) -> Iterable[RenderableType]:
        """rich's documented place to change what is drawn."""
        if time.monotonic() >= self._shown_from:
            yield from super().get_renderables()


class PhaseBar:
    """`⠹ match and score ━━━━━━━━━━╺━━━━━━━━━━ 1/4 0:00:03`: a PhaseLog that also wants to know
    when a phase starts, and hands each end on to `log`."""

    def __init__(self, progress: Progress, phases: Sequence[str], log: PhaseLog) -> None:
        self._progress = progress
        self._task = progress.add_task(phases[0] if phases else "", total=len(phases))
        self._log = log

    def start(self, phase: str) -> None:
        self._progress.update(self._task, description=phase)

    def __call__(self, phase: str, seconds: float) -> None:
        """`phase` ended after `seconds`."""
        self._progress.advance(self._task)
        self._log(phase, seconds)


@contextmanager
def phase_progress(
    phases: Sequence[str],
    log: PhaseLog,
    enabled: bool = True,
    console: Console | None = None,
    delay: float = DELAY,
) -> Iterator[PhaseLog]:
    """`log` with a progress bar over `phases` when `enabled` and `console` (default: stderr) is
    an interactive terminal; `log` itself in a pipe, a log file or a dumb terminal."""
    console = Console(stderr=True) if console is None else console
    if not (enabled and console.is_interactive):
        yield log
        return
    with _DelayedProgress(console, delay) as progress:
        yield PhaseBar(progress, phases, log)
