"""The progress bar of `prelabel-eval` (rich's) and the phases it counts."""

from __future__ import annotations

import io
import logging
import os
import pty
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.paths import EXAMPLES, ROOT
from rich.console import Console

from handler.inputs import parse_inputs
from handler.pipeline import PHASES, log_to_stderr, quiet, run
from handler.progress import phase_progress
from handler.storage import open_store

# Escape sequences (colour, cursor show/hide, erase line, cursor up): what a terminal does not print.
ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
EXAMPLE = {"GT_DATASET": str(EXAMPLES / "gt.json"), "PRED_DATASET": str(EXAMPLES / "predictions.jsonl")}


def terminal() -> tuple[io.StringIO, Console]:
    screen = io.StringIO()
    return screen, Console(file=screen, force_terminal=True, force_interactive=True, width=100)


def visible(text: str) -> str:
    return ESCAPES.sub("", text).replace("\r", "").replace("\n", "")


def test_run_logs_exactly_the_phases_the_bar_counts(tmp_path: Path) -> None:
    started: list[str] = []
    ended: list[str] = []

    class Recorder:
        def start(self, phase: str) -> None:
            started.append(phase)

        def __call__(self, phase: str, seconds: float) -> None:
            ended.append(phase)

    run(parse_inputs(EXAMPLE), open_store(str(tmp_path / "store")), log=Recorder())
    assert started == ended == list(PHASES)


def test_bar_shows_the_phase_and_the_count_then_is_erased() -> None:
    screen, console = terminal()
    ended: list[str] = []
    with phase_progress(PHASES, lambda phase, _: ended.append(phase), console=console, delay=0.0) as log:
        log(PHASES[0], 0.1)
        getattr(log, "start")(PHASES[1])  # noqa: B009 (a PhaseLog that watches starts)
        time.sleep(0.3)  # rich's refresh thread redraws meanwhile
    text = screen.getvalue()
    assert f"{PHASES[1]} " in visible(text) and f"1/{len(PHASES)}" in visible(text)
    assert ended == [PHASES[0]]  # the bar hands each phase's end on to the log it wraps
    assert text.endswith("\x1b[2K")  # transient: the bar's line is erased at the end


def test_short_run_draws_nothing_visible() -> None:
    screen, console = terminal()
    with phase_progress(PHASES, quiet, console=console, delay=60.0) as log:
        log(PHASES[0], 0.1)
        time.sleep(0.2)
    assert visible(screen.getvalue()) == ""


@pytest.mark.parametrize("enabled", [True, False])
def test_no_bar_off_a_terminal_or_when_disabled(enabled: bool) -> None:
    console = Console(file=io.StringIO()) if enabled else terminal()[1]
    with phase_progress(PHASES, log_to_stderr, enabled=enabled, console=console) as log:
        assert log is log_to_stderr


def test_phase_records_stay_on_the_prelabel_logger_under_the_bar(caplog: pytest.LogCaptureFixture) -> None:
    _, console = terminal()
    with (
        caplog.at_level(logging.INFO, logger="prelabel"),
        phase_progress(PHASES, log_to_stderr, console=console, delay=60.0) as log,
    ):
        for phase in PHASES:
            log(phase, 0.01)
    assert [r.getMessage().split(":")[0] for r in caplog.records if r.name == "prelabel"] == list(PHASES)


def _cli_on(stderr: int, store: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "handler.cli", EXAMPLE["GT_DATASET"], EXAMPLE["PRED_DATASET"]]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PRELABEL_STORE": str(store), "TERM": "xterm"}
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=stderr, env=env, text=True, timeout=120)


def test_on_a_real_terminal_the_bar_leaves_nothing_behind(tmp_path: Path) -> None:
    """stderr on a pseudo-terminal: rich drives it; the example run is short, so nothing shows,
    and should a loaded machine make it pass the delay, the bar is all there is and is erased."""
    controller, terminal_side = pty.openpty()
    try:
        answer = _cli_on(terminal_side, tmp_path / "store")
        os.close(terminal_side)
        screen = b""
        while chunk := _read(controller):
            screen += chunk
    finally:
        os.close(controller)
    assert answer.returncode == 0 and "\nAssistance score" in answer.stdout
    text = screen.decode()
    assert "\x1b[?25l" in text  # rich hid the cursor: the bar was armed
    shown = visible(text)
    assert shown == "" or (f"/{len(PHASES)}" in shown and text.endswith("\x1b[2K")), repr(text[-300:])


def _read(descriptor: int) -> bytes:
    try:
        return os.read(descriptor, 4096)
    except OSError:  # EIO: the terminal side is closed and drained
        return b""


def test_a_pipe_gets_no_bar(tmp_path: Path) -> None:
    answer = _cli_on(subprocess.PIPE, tmp_path / "store")
    assert answer.returncode == 0 and answer.stderr == ""
