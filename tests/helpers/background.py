"""Slow work a pytest run starts once, in the background, and its xdist workers share: the Label
Studio server and the projects it holds (helpers/label_studio_fixtures.py), the fresh virtual
environment of the Dockerfile test (helpers/dockerfile.py).

It starts as soon as a session has collected a test that needs it (`pytest_collection_finish`),
so it overlaps the tests that run first, instead of one worker waiting for it. The first worker to
take a job's file lock starts it and writes its state file; the others read that. Each job runs
under the watchdog of the run's controller (helpers/watchdog.py), in a process group of its own,
so no job outlives its run, even a killed one; the controller stops every job group and removes
the run's folder when the run ends (`pytest_unconfigure`).

A job that makes files runs `python -m helpers.SOME_MODULE` whose main is `finish_job(name, make)`:
its files land in `run_dir() / name`, then a `name.done` marker (`name.failed`: the traceback);
a test waits for it with `wait_for(name)`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import pytest

from helpers import watchdog
from helpers.paths import ROOT
from helpers.watchdog import alive

# The run's folder, made by the run's controller and inherited by its xdist workers. Not under
# pytest's basetemp: pytest deletes all but the newest three of those at the start of every run,
# and a run on the same machine (another checkout) would delete a database still in use.
RUN_DIR_VARIABLE: Final = "PRELABEL_TEST_RUN_DIR"
STOP_GRACE_S: Final = 10.0
WAIT_TIMEOUT_S: Final = 900.0
_STARTED: list[subprocess.Popen[bytes]] = []  # kept referenced: they outlive the call on purpose


def controller() -> bool:
    return not os.environ.get("PYTEST_XDIST_WORKER")


def run_dir() -> Path:
    return Path(os.environ[RUN_DIR_VARIABLE])


def pytest_configure(config: pytest.Config) -> None:
    if controller():  # a fresh folder per run, even for a pytest started inside a test
        os.environ[RUN_DIR_VARIABLE] = tempfile.mkdtemp(prefix="prelabel-test-run-")


def pytest_unconfigure(config: pytest.Config) -> None:
    if controller() and RUN_DIR_VARIABLE in os.environ:
        for state in run_dir().glob("*.state.json"):
            stop_group(json.loads(state.read_text())["pid"])
        shutil.rmtree(os.environ.pop(RUN_DIR_VARIABLE), ignore_errors=True)


# The fixtures whose tests run last: by then their background work is done (xdist's worksteal
# hands each worker a half of the collection and steals from the end, so both reach them late).
_LATE: set[str] = set()


def run_late(*fixtures: str) -> None:
    """Run the tests that use `fixtures` after the others (a plugin calls it when imported)."""
    _LATE.update(fixtures)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    late = [item for item in items if _LATE & set(getattr(item, "fixturenames", ()))]
    if late:
        kept = [item for item in items if item not in set(late)]
        items[:] = kept + late


def collected(session: pytest.Session, fixtures: Iterable[str]) -> bool:
    """Whether the session collected a test that uses one of `fixtures`."""
    wanted = set(fixtures)
    return any(wanted & set(getattr(item, "fixturenames", ())) for item in session.items)


def start_once(
    name: str,
    command: Callable[[], tuple[list[str], Mapping[str, str], dict[str, Any]]],
) -> dict[str, Any]:
    """Job `name`'s state: started here if no worker started it yet. `command()` gives what to run,
    its environment and the state to share (the job's pid is added to it)."""
    folder = run_dir()
    with _locked(folder / f"{name}.lock"):
        state_file = folder / f"{name}.state.json"
        if state_file.exists():
            state: dict[str, Any] = json.loads(state_file.read_text())
            return state
        arguments, env, state = command()
        process = _spawn_watched(arguments, env, folder / f"{name}.log")
        state = {**state, "pid": process.pid, "log": str(folder / f"{name}.log")}
        state_file.write_text(json.dumps(state))
        return state


def start_helper_job(name: str, module: str) -> None:
    """Start job `name` as `python -m helpers.MODULE` (whose main is `finish_job`), once per run."""
    start_once(name, lambda: (*helper_command(module), {}))


def helper_command(module: str, *arguments: str) -> tuple[list[str], dict[str, str]]:
    """`python -m helpers.MODULE ARGUMENTS`, and an environment that finds `helpers` and `handler`."""
    inherited = os.environ.get("PYTHONPATH")
    path = os.pathsep.join([str(ROOT / "tests"), str(ROOT), *([inherited] if inherited else [])])
    return [sys.executable, "-m", f"helpers.{module}", *arguments], {**os.environ, "PYTHONPATH": path}


def wait_for(name: str, timeout: float = WAIT_TIMEOUT_S) -> Path:
    """The folder of job `name`'s files once its marker says it is done (its failure is raised)."""
    folder = run_dir()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (folder / f"{name}.done").exists():
            return folder / name
        failed = folder / f"{name}.failed"
        if failed.exists():
            raise RuntimeError(f"the background job {name!r} failed:\n{failed.read_text()}")
        time.sleep(0.2)
    raise TimeoutError(f"the background job {name!r} did not finish within {timeout:.0f} s")


def finish_job(name: str, make: Callable[[Path], None], folder: Path | None = None) -> None:
    """Run `make` on the job's folder, then mark it done or failed (in the job's own process)."""
    base = folder or run_dir()
    target = base / name
    target.mkdir(parents=True, exist_ok=True)
    try:
        make(target)
    except Exception:
        (base / f"{name}.failed").write_text(traceback.format_exc())
    else:
        (base / f"{name}.done").touch()


def stop_group(pid: int) -> None:
    """SIGTERM the process group led by `pid`, SIGKILL it if it lingers."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def _owner_pid() -> int:
    # An xdist worker is a child of the controller, which outlives every worker of the run.
    return os.getppid() if os.environ.get("PYTEST_XDIST_WORKER") else os.getpid()


def _spawn_watched(command: list[str], env: Mapping[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, watchdog.__file__, str(_owner_pid()), "--", *command],
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stopped as one, untouched by Ctrl-C
        )
    _STARTED.append(process)
    return process


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
