"""`forked.beside`: a value computed in a forked child while the process goes on, taken back
pickled; computed in the process instead when no child may be forked or the child fails."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from handler.forked import beside, local_cores

ROOT = Path(__file__).resolve().parents[2]
needs_two_cores = pytest.mark.skipif(local_cores() < 2, reason="one core: nothing is forked")


def _where() -> tuple[int, list[int]]:
    return os.getpid(), list(range(5))


def _gone(pid: int) -> bool:
    """Whether `pid` is no child of this process any more (exited and reaped)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@needs_two_cores
def test_the_value_is_computed_in_a_child_and_its_child_is_reaped() -> None:
    pending = beside(_where)
    child = pending._child
    assert child is not None
    pid, value = pending.result()
    assert pid == child.pid != os.getpid() and value == [0, 1, 2, 3, 4]
    assert pending.result() == (pid, value)  # taken once
    assert _gone(child.pid)


def test_a_run_kept_to_one_process_computes_it_here_when_asked() -> None:
    calls: list[int] = []

    def compute() -> int:
        calls.append(os.getpid())
        return 7

    pending = beside(compute, fork=False)
    assert calls == []  # not before it is asked for
    assert pending.result() == 7 and pending.result() == 7
    assert calls == [os.getpid()]


def _fails() -> None:
    raise LookupError("the search failed")


@needs_two_cores
def test_a_childs_error_is_raised_here_with_its_own_traceback() -> None:
    pending = beside(_fails)
    with pytest.raises(LookupError, match="the search failed") as raised:
        pending.result()
    assert raised.traceback[-1].name == "_fails"  # computed again here, not unpickled


@needs_two_cores
def test_a_child_that_dies_leaves_the_work_to_this_process() -> None:
    calls: list[int] = []

    def compute() -> int:
        calls.append(os.getpid())
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return 3

    parent = os.getpid()
    assert beside(compute).result() == 3
    assert calls == [parent]  # the child's own call died with it


def _unpicklable() -> object:
    return lambda: None


@needs_two_cores
def test_a_value_that_does_not_pickle_is_computed_here() -> None:
    value = beside(_unpicklable).result()
    assert callable(value)


@needs_two_cores
def test_a_pending_value_dropped_unread_kills_and_reaps_its_child() -> None:
    pending = beside(lambda: time.sleep(60))
    child = pending._child
    assert child is not None
    pid = child.pid
    del pending, child
    gc.collect()
    assert _gone(pid)


@needs_two_cores
def test_the_child_dies_with_a_parent_killed_by_sigkill(tmp_path: Path) -> None:
    """No handler of the parent's runs on SIGKILL: the kernel ends the child (PR_SET_PDEATHSIG)."""
    pid_file = tmp_path / "child"
    script = textwrap.dedent(
        f"""
        import os, time
        from handler.forked import beside

        def compute():
            open({str(pid_file)!r}, "w").write(str(os.getpid()))
            time.sleep(60)

        pending = beside(compute)
        time.sleep(60)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 20
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline, "the child never started"
            time.sleep(0.01)
        child = int(pid_file.read_text())
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 20
    while Path(f"/proc/{child}").exists() and "Z" not in _state(child):
        assert time.monotonic() < deadline, "the child outlived its parent"
        time.sleep(0.01)


def _state(pid: int) -> str:
    """The process's state letter in /proc (Z: a zombie, dead and waiting for its reaper)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return "gone"
