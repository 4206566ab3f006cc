"""A map over forked local processes, for any layer: the readers decode big files with it, the
execution layer runs shards with it; and one over threads, for work done in compiled kernels.

Forked workers inherit the parent's imports and the tasks themselves (copy-on-write), so a
task travels as its index, not pickled (a piece of a file read once, box tables); only the
results come back. How many processes a map may use is its caller's to say (`worker_count`:
the run's `--workers`, else every core).

While the workers of a map run, the process that forked them would only wait: `meanwhile` gives it
work for then (the pipeline imports the report's code while the read's workers decode), or a
compiled kernel that releases the GIL runs it `alongside` on a thread of its own (the masks of both
sides read and drawn). A threaded map's tasks do not: their Python holds the GIL, so the work would only hold
their results back (bench/RESULTS.md).

Python work that would hold the GIL beside other Python work runs `beside`: in one forked child,
its value pickled back when asked for (the search for other readings and the bootstrap, while the
report's code is imported and the sketches' pass runs). A child that fails leaves the work to this process.

A worker (or child) dies with the process that forked it, however that one ends (SIGKILL included, where no
handler of ours runs): on Linux each worker asks the kernel for SIGKILL when its parent goes
(`PR_SET_PDEATHSIG`), then checks that its parent is still the one that forked it, so a parent
killed between the fork and the request leaves no worker either. The kernel's "parent" is the
forking thread: the pool lives inside `forked_map`'s generator, which runs in the caller's thread.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import signal
import sys
import weakref
from collections import deque
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from functools import cache
from typing import Any, Final, Generic, TypeVar

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
    waits for their results, or the first block `alongside` runs it beside its own; a block that
    does neither leaves it undone (its caller does it after)."""
    _MEANWHILE.append(work)
    try:
        yield
    finally:
        with suppress(ValueError):  # done already
            _MEANWHILE.remove(work)


@contextmanager
def alongside() -> Iterator[None]:
    """The `meanwhile` work waiting, if any, done on a thread of its own while the block runs (a
    compiled kernel that releases the GIL: the work's Python runs beside it), and finished, its
    error raised, before the block ends: no worker is forked while it runs."""
    if not _MEANWHILE:
        yield
        return
    with ThreadPoolExecutor(max_workers=1) as beside:
        done = beside.submit(_do_meanwhile)
        try:
            yield
        finally:
            done.result()


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
    caller, so that results wait in memory only that far. Closing the iterator early cancels the
    tasks not yet started."""
    threads = max(1, min(workers, len(tasks)))
    pool = ThreadPoolExecutor(max_workers=threads)
    pending: deque[Future[Result]] = deque()
    try:
        for task in tasks:
            pending.append(pool.submit(function, task))
            if len(pending) > threads:
                yield pending.popleft().result()
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


class Pending(Generic[Result]):
    """A value computed `beside` this process: in a forked child while this one goes on, or here
    when `result()` first asks for it (no child could be forked, or the child failed)."""

    __slots__ = ("_child", "_compute", "_value")

    def __init__(self, compute: Callable[[], Result], child: _Child | None = None) -> None:
        self._compute: Callable[[], Result] | None = compute
        self._child = child
        self._value: Result | None = None

    def result(self) -> Result:
        """The value, waited for once: the child's, else computed here (so an error is raised here,
        with its own traceback, as if nothing had been forked)."""
        if self._compute is None:
            return self._value  # type: ignore[return-value]  # computed: a Result, None included
        payload = self._child.collect() if self._child is not None else None
        self._child = None
        self._value = self._compute() if payload is None else pickle.loads(payload)
        self._compute = None
        return self._value


class _Child:
    """A forked child's process id and the read end of the pipe its pickled value comes through.
    Dropped unread (the run failed first), it is killed and reaped: no process outlives its use."""

    __slots__ = ("__weakref__", "_unread", "pid", "pipe")

    def __init__(self, pid: int, pipe: int) -> None:
        self.pid, self.pipe = pid, pipe
        self._unread = weakref.finalize(self, _reap, pid, pipe)

    def collect(self) -> bytes | None:
        """The child's pickled value once it has exited; None if it failed (died, raised, or its
        value did not pickle)."""
        self._unread.detach()
        with os.fdopen(self.pipe, "rb") as stream:
            payload = stream.read()
        _, status = os.waitpid(self.pid, 0)
        return payload if os.waitstatus_to_exitcode(status) == 0 else None


def _reap(pid: int, pipe: int) -> None:
    with suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    os.close(pipe)
    with suppress(ChildProcessError):
        os.waitpid(pid, 0)


def beside(compute: Callable[[], Result], fork: bool = True) -> Pending[Result]:
    """`compute()` started in a forked child, for Python work that would otherwise hold this
    process's GIL while it does other work (the search for other readings, beside the report's
    imports and the sketches' exact pass); its value comes back pickled, when `result()` asks.
    Computed here instead where forking does not pay or is not allowed: one core, no fork
    (another OS), or `fork` false (the run was asked to stay one process)."""
    if not fork or local_cores() < 2 or not hasattr(os, "fork"):
        return Pending(compute)
    parent, prctl = os.getpid(), _prctl()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's lines run in the child (coverage runs in the parent)
        os.close(read_end)
        _compute_in_child(compute, write_end, parent, prctl)
    os.close(write_end)
    return Pending(compute, _Child(pid, read_end))


def _compute_in_child(
    compute: Callable[[], object], pipe: int, parent: int, prctl: Callable[..., int] | None
) -> None:
    """The child's whole life: its value pickled into the pipe, then an exit without Python's
    teardown (no exit handler of the parent's, no buffered output written twice); any failure
    is the exit status alone, and the parent computes the value itself."""
    status = 1
    try:
        for signum in (signal.SIGINT, signal.SIGTERM):  # the parent's handlers withdraw its report
            signal.signal(signum, signal.SIG_DFL)
        _die_with_parent(parent, prctl)
        payload = memoryview(pickle.dumps(compute(), protocol=pickle.HIGHEST_PROTOCOL))
        while payload:
            payload = payload[os.write(pipe, payload) :]
        status = 0
    finally:
        os._exit(status)


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
