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
not reuse: with one arena the mask workload's peak memory is lower at the same CPU
(bench/RESULTS.md). One arena, unless the user set MALLOC_ARENA_MAX (read by glibc at start).

glibc also raises its threshold for serving a block from its own mapping to the size of each such
block freed, so that after the first large column is freed the phase's next ones (a mask run's
temporary columns, tens of MB) come from the heap, and what they free stays in the process until
the next phase's `malloc_trim`. A fixed threshold keeps every block from 4 MiB up in a mapping of
its own, given back when freed: the mask workload's peak memory is lower at the same CPU (a
smaller threshold lowers it more, but faults in every smaller temporary's pages afresh:
bench/RESULTS.md). Unless the user set MALLOC_MMAP_THRESHOLD_.

pydantic looks for plugins on the first model class it builds, by reading the entry points of
every installed distribution: a fixed cost of each start that grows with the environment, for
plugins that only watch validation. The command's findings are its own, so no plugins, unless the
user set PYDANTIC_DISABLE_PLUGINS (to a list of names, or to nothing to keep them all).

`leave` ends `python -m handler` and `prelabel-eval` without the interpreter's teardown: after the
exit handlers (logging's and multiprocessing's among them), freeing every module and object one at
a time costs CPU at the end of each run, serial, for memory the kernel takes back at once.
"""

import atexit
import ctypes
import os
import sys
from contextlib import suppress
from typing import NoReturn

os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

# glibc's `mallopt` parameters (malloc.h): the most arenas, the smallest block given a mapping.
_M_ARENA_MAX = -8
_M_MMAP_THRESHOLD = -3
# Blocks from this size up are mapped on their own (each column of a large run is).
_MMAP_THRESHOLD = 4 << 20


def _malloc_set(parameter: int, value: int, variable: str) -> None:
    """glibc's malloc `parameter` set to `value` unless the user set its `variable` (glibc only;
    elsewhere nothing to set)."""
    if variable in os.environ or not sys.platform.startswith("linux"):
        return
    with suppress(OSError, AttributeError):  # a libc without mallopt (musl): its own allocator
        ctypes.CDLL(None).mallopt(parameter, value)


_malloc_set(_M_ARENA_MAX, 1, "MALLOC_ARENA_MAX")
_malloc_set(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD, "MALLOC_MMAP_THRESHOLD_")

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
