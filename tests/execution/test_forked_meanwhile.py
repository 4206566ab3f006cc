"""`forked.meanwhile`: the forking process's own work, done once while its workers run."""

from __future__ import annotations

import os
import time
from pathlib import Path

from handler.forked import forked_map, meanwhile


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
