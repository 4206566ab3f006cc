"""What the command-line entry points (`python -m handler`, `prelabel-eval`) set before numpy is
imported. Imported first by both; the Python API leaves the caller's process as it is.

numpy asks the kernel for transparent huge pages on every large array (`madvise`). On kernels
whose huge-page defrag setting is `madvise` (Debian's default), each fault of a fresh array then
compacts and zeroes a huge page synchronously, which a big run pays for in system time and wall
(bench/RESULTS.md). A run's arrays are written once and read a few times, so huge pages buy it
nothing. A value the user set is kept.

numpy's OpenBLAS runs a matrix product on a thread per core. The run's products are the
bootstrap's (its counts by the draws' tallies), small or split over two threads of its own
already, while its other work runs in worker processes on the same cores: BLAS's threads then
wait on busy cores, and a product of a few million multiplications took fifty times longer than
on one thread (bench/RESULTS.md). One BLAS thread, unless the user set OPENBLAS_NUM_THREADS.

glibc's malloc gives each thread that allocates an arena of its own (up to eight per core), and
memory freed in one is reused only by its thread: the threads that read a big file in blocks leave
their arenas' freed memory in the process, which the next phase's allocations in the main thread do
not reuse: with one arena the mask workload's peak memory is a tenth lower at the same CPU
(bench/RESULTS.md). One arena, unless the user set MALLOC_ARENA_MAX (read by glibc at start).

`leave` ends `python -m handler` without the interpreter's teardown: after the exit handlers
(logging's and multiprocessing's among them), freeing every module and object one at a time costs
CPU at the end of each run, serial, for memory the kernel takes back at once.
"""

import atexit
import ctypes
import os
import sys
from contextlib import suppress
from typing import NoReturn

os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# glibc's `mallopt` parameter for the most arenas (malloc.h).
_M_ARENA_MAX = -8


def _one_malloc_arena() -> None:
    """Every thread's allocations from the main arena (glibc only; elsewhere nothing to set)."""
    if "MALLOC_ARENA_MAX" in os.environ or not sys.platform.startswith("linux"):
        return
    with suppress(OSError, AttributeError):  # a libc without mallopt (musl): its own allocator
        ctypes.CDLL(None).mallopt(_M_ARENA_MAX, 1)


_one_malloc_arena()

# The status `leave` was given; none while the process is not a finished command.
_LEFT_WITH: list[int] = []


def leave(status: int) -> NoReturn:
    """Exit the command with `status`; the process then ends right after its exit handlers."""
    _LEFT_WITH.append(status)
    sys.exit(status)


def _without_teardown() -> None:
    if not _LEFT_WITH:
        return  # an uncaught error, or the Python API: the usual ending
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a closed pipe or stream: nothing left to write there
            stream.flush()
    os._exit(_LEFT_WITH[-1])


# Registered first of the run's exit handlers, so run after all of them (they run last in, first out).
atexit.register(_without_teardown)
