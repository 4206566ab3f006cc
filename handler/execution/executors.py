"""Where the shards run: in this process, in a local process pool, or on a dask.distributed cluster.

Every executor maps one picklable function over a list of tasks and yields the results in
task order; nothing else differs, so the findings are the same whichever ran (contract §11).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, TypeVar

import msgspec

from handler.errors import ExecutionError, InputError
from handler.forked import forked_map, local_cores, threaded_map

if TYPE_CHECKING:
    from distributed import Client

Task = TypeVar("Task")
Result = TypeVar("Result")
WORKERS_VARIABLE: Final = "PRELABEL_WORKERS"
SCHEDULER_VARIABLE: Final = "PRELABEL_DASK_SCHEDULER"
Engine = Literal["in-process", "local-processes", "dask"]


class Executor(Protocol):
    """Maps a function over tasks; results come back in task order."""

    @property
    def engine(self) -> Engine: ...

    @property
    def workers(self) -> int: ...

    def map(self, function: Callable[[Task], Result], tasks: Sequence[Task]) -> Iterator[Result]: ...


class InProcess(msgspec.Struct, frozen=True):
    """This process; `threads` > 1 runs up to that many tasks at once (`threaded_map`): for an input
    too small to be worth forking, whose shards' kernels and numpy passes release the GIL."""

    engine: Engine = "in-process"
    workers: int = 1
    threads: int = 1

    def map(self, function: Callable[[Task], Result], tasks: Sequence[Task]) -> Iterator[Result]:
        if self.threads > 1 and len(tasks) > 1:
            return threaded_map(function, tasks, self.threads)
        return map(function, tasks)


class LocalPool(msgspec.Struct, frozen=True):
    """A pool of forked local processes (`handler.forked`): a task travels as its index."""

    workers: int
    engine: Engine = "local-processes"

    def map(self, function: Callable[[Task], Result], tasks: Sequence[Task]) -> Iterator[Result]:
        return forked_map(function, tasks, self.workers)


class DaskCluster(msgspec.Struct, frozen=True):
    """A dask.distributed scheduler; the workers must reach the data and the store themselves."""

    address: str
    engine: Engine = "dask"

    @property
    def workers(self) -> int:
        info: dict[str, Any] = self._client().scheduler_info()
        return max(1, len(info["workers"]))

    def _client(self) -> Client:
        return _dask_client(self.address)

    def map(self, function: Callable[[Task], Result], tasks: Sequence[Task]) -> Iterator[Result]:
        client = self._client()
        # Retries cover a worker lost mid-shard: a shard is pure and may run again.
        futures = client.map(function, list(tasks), pure=False, retries=2)
        for future in futures:
            yield future.result()


def workers_from(value: str | None) -> int | None:
    """`--workers` / PRELABEL_WORKERS: a positive integer; None or empty means "decide"."""
    if value is None or not value.strip():
        return None
    try:
        workers = int(value)
    except ValueError:
        workers = 0
    if workers < 1:
        raise InputError(f"{WORKERS_VARIABLE} / --workers {value!r}: expected a positive whole number")
    return workers


def choose_executor(
    workers: int | None, scheduler: str | None, boxes: int, min_boxes_per_worker: int
) -> Executor:
    """Dask when a scheduler is named; else a pool when asked for or when the input is large."""
    if scheduler:
        return DaskCluster(scheduler)
    if workers is None:
        workers = max(1, min(local_cores(), boxes // min_boxes_per_worker))
        if workers == 1:
            return InProcess(threads=local_cores())
    return InProcess() if workers == 1 else LocalPool(workers)


@cache
def _dask_client(address: str) -> Client:
    """One client per scheduler address and process (distributed is imported only here)."""
    from distributed import Client

    try:
        return Client(address, set_as_default=False, timeout=30)  # type: ignore[no-untyped-call]
    except OSError as error:
        raise ExecutionError(
            f"{SCHEDULER_VARIABLE} / --scheduler {address}: cannot connect to the dask scheduler ({error})"
        ) from None
