"""A progress line for `prelabel-eval` on an interactive terminal: stdlib only, on stderr.

It appears only once a run has taken `delay` seconds (short runs stay silent), is redrawn
in place by a background thread, and is erased when the run ends. It is the run's phase
log: told when each phase starts and ends, it shows the phase, how many are done and the
elapsed time.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Final, TextIO

WIDTH: Final = 24  # characters of the bar itself
DELAY: Final = 2.0  # seconds before the line first appears
INTERVAL: Final = 0.25  # seconds between redraws


class ProgressBar:
    """`[########----------------] 3/7 match and score  4 s`, redrawn in place."""

    def __init__(
        self, phases: Sequence[str], stream: TextIO, delay: float = DELAY, interval: float = INTERVAL
    ) -> None:
        self._phases = list(phases)
        self._stream = stream
        self._delay = delay
        self._interval = interval
        self._current = self._phases[0] if self._phases else ""
        self._done = 0
        self._started = time.monotonic()
        self._drawn = 0  # length of the line on screen, 0 when none
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._redraw_until_stopped, name="progress", daemon=True)

    def start(self, phase: str) -> None:
        with self._lock:
            self._current = phase

    def __call__(self, phase: str, seconds: float) -> None:
        """A PhaseLog: `phase` ended after `seconds`."""
        with self._lock:
            self._done += 1

    def line(self, now: float) -> str:
        with self._lock:
            total = max(len(self._phases), self._done + 1)
            filled = WIDTH * self._done // total
            step = min(self._done + 1, total)
            current = self._current
        bar = "#" * filled + "-" * (WIDTH - filled)
        return f"[{bar}] {step}/{total} {current}  {now - self._started:.0f} s"

    def _write(self, text: str) -> None:
        self._stream.write("\r" + text + " " * max(0, self._drawn - len(text)))
        self._stream.flush()
        self._drawn = len(text)

    def _redraw_until_stopped(self) -> None:
        while not self._stopped.wait(self._interval):
            now = time.monotonic()
            if now - self._started >= self._delay:
                self._write(self.line(now))

    def __enter__(self) -> ProgressBar:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stopped.set()
        self._thread.join()
        if self._drawn:
            self._write("")
            self._stream.write("\r")
            self._stream.flush()


@contextmanager
def terminal_progress(phases: Sequence[str], stream: TextIO | None = None) -> Iterator[ProgressBar | None]:
    """A running ProgressBar when `stream` (default stderr) is a terminal, else None."""
    stream = sys.stderr if stream is None else stream
    if not stream.isatty():
        yield None
        return
    with ProgressBar(phases, stream) as bar:
        yield bar
