"""A node killed with SIGKILL leaves no process of its session behind, its pipes close,
and the next run into the same store succeeds. A few kill moments here; `python bench/killed.py`
runs the long campaign (docs/scaling.md, "Workers die with the node")."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest
from helpers.needs import existing

from bench.killed import KILL, clean_run, kill_once, node_environment
from bench.smoke import GENERATOR
from bench.workloads import ensure_data
from handler.datasets.jsondoc import PARALLEL_MIN_BYTES
from handler.forked import _die_with_parent, _prctl


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    existing(Path("/proc/self/stat"), "Linux's /proc (the test finds a session's processes there)")
    generator = existing(GENERATOR, "the workload generator")
    files = ensure_data(KILL, tmp_path_factory.mktemp("kill"), generator)
    # big enough that the results are streamed in pieces (on threads), as a big file is
    assert files.results.stat().st_size > PARALLEL_MIN_BYTES
    return node_environment(files.gt, files.results)


def test_a_node_killed_at_any_of_a_few_moments_leaves_nothing_and_the_store_still_works(
    environment: dict[str, str], tmp_path: Path
) -> None:
    store = tmp_path / "store"
    wall, first = clean_run(environment, store)
    assert first.returncode == 0, first.stderr
    kills = [kill_once(environment, store, after) for after in (None, wall * 0.4, wall * 0.6, wall * 0.8)]
    assert all(kill.clean for kill in kills), kills
    assert kills[0].workers > 0, "no worker was alive at the first kill: the test killed nothing that forks"
    _, after = clean_run(environment, store)
    assert after.returncode == 0, after.stderr


def _worker_exit(parent: int) -> int | None:
    worker = multiprocessing.get_context("fork").Process(target=_die_with_parent, args=(parent, _prctl()))
    worker.start()
    worker.join()
    return worker.exitcode


def test_a_worker_whose_parent_is_already_gone_exits_at_once() -> None:
    assert _worker_exit(os.getpid()) == 0
    assert _worker_exit(os.getpid() + 1_000_000) == 1  # not its parent: the one that forked it is gone
