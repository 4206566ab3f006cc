"""The progress line of `prelabel-eval` and the phases it counts."""

from __future__ import annotations

import io
import time
from pathlib import Path

from helpers.paths import EXAMPLES

from handler.inputs import parse_inputs
from handler.pipeline import PHASES, run
from handler.progress import ProgressBar, terminal_progress
from handler.storage import open_store


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_run_logs_exactly_the_phases_the_bar_counts(tmp_path: Path) -> None:
    started: list[str] = []
    ended: list[str] = []

    class Recorder:
        def start(self, phase: str) -> None:
            started.append(phase)

        def __call__(self, phase: str, seconds: float) -> None:
            ended.append(phase)

    inputs = parse_inputs(
        {"GT_DATASET": str(EXAMPLES / "gt.json"), "PRED_DATASET": str(EXAMPLES / "predictions.jsonl")}
    )
    run(inputs, open_store(str(tmp_path / "store")), log=Recorder())
    assert started == ended == list(PHASES)


def test_bar_is_drawn_in_place_then_erased() -> None:
    screen = Terminal()
    with ProgressBar(PHASES, screen, delay=0.0, interval=0.01) as bar:
        bar.start(PHASES[0])
        bar(PHASES[0], 0.1)
        bar.start(PHASES[1])
        time.sleep(0.1)
    text = screen.getvalue()
    assert f"2/{len(PHASES)} {PHASES[1]}" in text
    assert "\n" not in text  # one line, redrawn with carriage returns
    assert text.endswith("\r") and text.rstrip("\r").split("\r")[-1].strip() == ""  # erased


def test_short_run_draws_nothing() -> None:
    screen = Terminal()
    with ProgressBar(PHASES, screen, delay=60.0, interval=0.01):
        time.sleep(0.05)
    assert screen.getvalue() == ""


def test_no_bar_when_stderr_is_not_a_terminal() -> None:
    with terminal_progress(PHASES, io.StringIO()) as bar:
        assert bar is None


def test_bar_line_counts_done_phases() -> None:
    bar = ProgressBar(PHASES, Terminal())
    bar(PHASES[0], 1.0)
    bar(PHASES[1], 1.0)
    bar.start(PHASES[2])
    line = bar.line(time.monotonic())
    assert line.startswith("[" + "#" * (24 * 2 // len(PHASES)))
    assert f"3/{len(PHASES)} {PHASES[2]}" in line
