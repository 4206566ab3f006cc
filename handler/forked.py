"""A map over forked local processes, for any layer: the readers decode big files with it, the
execution layer runs shards with it.

Forked workers inherit the parent's imports and the tasks themselves (copy-on-write), so a
task travels as its index, not pickled (a piece of a file read once, box tables); only the
results come back. How many processes a run may use is set once by the entry point
(`allowed_workers`), so the readers need no execution options of their own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

Task = TypeVar("Task")
Result = TypeVar("Result")

# What a forked worker inherits: the function and tasks of the map that forked it.
_FORKED: list[tuple[Callable[[Any], Any], Sequence[Any]]] = []
# `--workers` / PRELABEL_WORKERS of the run under way; None: every core the process may use.
_ALLOWED: ContextVar[int | None] = ContextVar("prelabel_local_workers", default=None)


def local_cores() -> int:
    """The cores this process may run on (a container's CPU set, not the host's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@contextmanager
def allowed_workers(workers: int | None) -> Iterator[None]:
    """Inside the block, `worker_budget()` is `workers` (None: decide from the cores)."""
    token = _ALLOWED.set(workers)
    try:
        yield
    finally:
        _ALLOWED.reset(token)


def worker_budget() -> int:
    """How many local processes the run under way may use."""
    allowed = _ALLOWED.get()
    return local_cores() if allowed is None else allowed


def forked_map(
    function: Callable[[Task], Result], tasks: Sequence[Task], workers: int
) -> Generator[Result, None, None]:
    """`map(function, tasks)` on up to `workers` forked processes, results in task order;
    closing the iterator early cancels the tasks not yet started."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    _FORKED.append((function, tasks))
    pool = ProcessPoolExecutor(max_workers=min(workers, len(tasks)) or 1, mp_context=context)
    try:
        yield from pool.map(_run_inherited, range(len(tasks)))
    finally:
        pool.shutdown(cancel_futures=True)  # a caller that stops early does not wait for the rest
        _FORKED.pop()


def _run_inherited(index: int) -> Any:
    function, tasks = _FORKED[-1]
    return function(tasks[index])
