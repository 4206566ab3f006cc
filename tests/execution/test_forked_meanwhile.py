"""`forked.meanwhile`: the forking process's own work, done once while its workers run, or beside
a kernel that releases the GIL (`alongside`)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from handler.forked import alongside, forked_map, meanwhile, threaded_map


def _appeared(path: Path) -> tuple[int, bool]:
    """In a worker: whether `path` appears within 20 s (the parent makes it meanwhile)."""
    deadline = time.monotonic() + 20
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return os.getpid(), path.exists()


def test_the_work_runs_here_once_while_the_first_maps_workers_wait_for_it(tmp_path: Path) -> None:
    flag, done = tmp_path / "made meanwhile", []

    def work() -> None:
        done.append(os.getpid())
        flag.touch()

    with meanwhile(work):
        first = list(forked_map(_appeared, [flag] * 3, 2))
        second = list(forked_map(_appeared, [flag] * 2, 2))
    assert done == [os.getpid()]  # here, and only for the first map
    assert all(found for _, found in first + second)  # the workers saw it while they ran
    assert os.getpid() not in {pid for pid, _ in first + second}


def test_a_block_that_forks_nothing_leaves_the_work_undone(tmp_path: Path) -> None:
    done: list[int] = []
    with meanwhile(lambda: done.append(1)):
        pass
    assert list(forked_map(_appeared, [tmp_path], 2)) and done == []


def test_alongside_runs_the_work_once_on_another_thread_while_the_block_runs() -> None:
    started, finished, threads = threading.Event(), threading.Event(), []

    def work() -> None:
        threads.append(threading.get_ident())
        started.set()
        assert finished.wait(20)  # it runs while the block does, not before it nor after

    with meanwhile(work):
        with alongside():
            assert started.wait(20)
            finished.set()
        with alongside():  # done already: the second block does nothing
            pass
    assert threads and threads != [threading.get_ident()] and len(threads) == 1


def test_alongside_raises_the_works_error_when_the_block_ends() -> None:
    def work() -> None:
        raise LookupError("the work failed")

    with meanwhile(work), pytest.raises(LookupError, match="the work failed"), alongside():
        pass


def test_a_threaded_map_leaves_the_work_to_its_caller() -> None:
    done: list[int] = []
    with meanwhile(lambda: done.append(1)):
        assert list(threaded_map(abs, [-1, -2, -3], 2)) == [1, 2, 3]
        assert done == []
    assert done == []
