"""A map over forked local processes, for any layer: the readers decode big files with it, the
execution layer runs shards with it; and one over threads, for work done in compiled kernels.

Forked workers inherit the parent's imports and the tasks themselves (copy-on-write), so a
task travels as its index, not pickled (a piece of a file read once, box tables); only the
results come back. How many processes a map may use is its caller's to say (`worker_count`:
the run's `--workers`, else every core).

While the workers of a map run, the process that forked them would only wait: `meanwhile` gives it
work for then (the pipeline imports the report's code while the read's workers decode).

A worker dies with the process that forked it, however that one ends (SIGKILL included, where no
handler of ours runs): on Linux each worker asks the kernel for SIGKILL when its parent goes
(`PR_SET_PDEATHSIG`), then checks that its parent is still the one that forked it, so a parent
killed between the fork and the request leaves no worker either. The kernel's "parent" is the
forking thread: the pool lives inside `forked_map`'s generator, which runs in the caller's thread.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from functools import cache
from typing import Any, Final, TypeVar

Task = TypeVar("Task")
Result = TypeVar("Result")

# What a forked worker inherits: the function and tasks of the map that forked it.
_FORKED: list[tuple[Callable[[Any], Any], Sequence[Any]]] = []
PR_SET_PDEATHSIG: Final = 1  # <linux/prctl.h>
# What this process does once the workers of its next map have started (`meanwhile`).
_MEANWHILE: list[Callable[[], object]] = []


def local_cores() -> int:
    """The cores this process may run on (a container's CPU set, not the host's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@contextmanager
def meanwhile(work: Callable[[], object]) -> Iterator[None]:
    """Inside the block, the first `forked_map` to start its workers runs `work` here before it
    waits for their results; a block that forks none leaves it undone (its caller does it after)."""
    _MEANWHILE.append(work)
    try:
        yield
    finally:
        with suppress(ValueError):  # done already
            _MEANWHILE.remove(work)


def worker_count(workers: int | None) -> int:
    """The local processes a run may use: `--workers` / PRELABEL_WORKERS, None meaning every core."""
    return local_cores() if workers is None else workers


def forked_map(
    function: Callable[[Task], Result], tasks: Sequence[Task], workers: int
) -> Generator[Result, None, None]:
    """`map(function, tasks)` on up to `workers` forked processes, results in task order;
    closing the iterator early cancels the tasks not yet started."""
    # Imported here: multiprocessing's machinery is for a run that forks (a small one does not).
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork")
    _FORKED.append((function, tasks))
    pool = ProcessPoolExecutor(
        max_workers=min(workers, len(tasks)) or 1,
        mp_context=context,
        initializer=_die_with_parent,
        initargs=(os.getpid(), _prctl()),
    )
    try:
        results = pool.map(_run_inherited, range(len(tasks)))  # the workers are forked by now
        _do_meanwhile()
        yield from results
    finally:
        pool.shutdown(cancel_futures=True)  # a caller that stops early does not wait for the rest
        _FORKED.pop()


def broken_pool() -> type[BaseException]:
    """What a map's pool raises when a worker died; for an `except` clause, which evaluates it only
    once something was raised (so a run that never forks does not import it)."""
    from concurrent.futures.process import BrokenProcessPool

    return BrokenProcessPool


def _do_meanwhile() -> None:
    while _MEANWHILE:
        _MEANWHILE.pop(0)()


def threaded_map(
    function: Callable[[Task], Result], tasks: Sequence[Task], workers: int
) -> Generator[Result, None, None]:
    """`map(function, tasks)` on up to `workers` threads, results in task order, for work that
    releases the GIL (a compiled kernel, reads); at most one task per thread is done ahead of the
    caller, so that results wait in memory only that far. This process runs the `meanwhile`
    work while the first tasks run; closing the iterator early cancels the tasks not yet started."""
    threads = max(1, min(workers, len(tasks)))
    pool = ThreadPoolExecutor(max_workers=threads)
    pending: deque[Future[Result]] = deque()
    try:
        for task in tasks:
            pending.append(pool.submit(function, task))
            if len(pending) == threads:  # every thread has work
                _do_meanwhile()
            if len(pending) > threads:
                yield pending.popleft().result()
        _do_meanwhile()
        while pending:
            yield pending.popleft().result()
    finally:
        pool.shutdown(cancel_futures=True)
        trim_heap()


def trim_heap() -> None:
    """What the process freed, given back to the system (glibc keeps it for later allocations, in
    its threads' arenas and in pieces a later column need not fit, so a later peak would stack on
    it); nothing elsewhere."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim(3); None elsewhere (another OS, another C library)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
        return trim
    except AttributeError:  # not glibc
        return None


def _run_inherited(index: int) -> Any:
    function, tasks = _FORKED[-1]
    return function(tasks[index])


@cache
def _prctl() -> Callable[..., int] | None:
    """libc's prctl(2), looked up in the parent once (a worker needs no lookup); None off Linux."""
    return ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None


def _die_with_parent(parent: int, prctl: Callable[..., int] | None) -> None:
    """A worker's first act: be killed by the kernel when `parent` dies; already dead, exit.
    The parent's work for while it waits is not the worker's."""
    if prctl is not None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it died before the request: no signal will come
        os._exit(1)
    _MEANWHILE.clear()
