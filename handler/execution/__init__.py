"""Evaluation as a map over shards of whole assets and an exact merge (contract §11).

`read_and_plan` opens both sides, reads them (`read_both`: loaded by their formats, read again by
`handler.readings`) and plans the shards, or leaves shard files to the
workers (`plan_sides` does so for sides already open: compare's one GT); `evaluate_plan` maps
`run_shard` over them with the chosen executor (in this process, a local process pool, or a
dask cluster) and merges the partial states. Each shard writes its
own ledger chunk into the report, so only the partial states come back.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from handler.execution.run import (
        Evaluated,
        ExecutionOptions,
        ShardPlan,
        evaluate_plan,
        plan_sides,
        read_and_plan,
        read_both,
    )

__all__ = [
    "Evaluated",
    "ExecutionOptions",
    "ShardPlan",
    "evaluate_plan",
    "plan_sides",
    "read_and_plan",
    "read_both",
]


def __getattr__(name: str) -> Any:
    # Imported on first use: the entry points' option parsing imports `executors` from this
    # package, and `--help` should not load the readers, the engine and the report with it.
    if name not in __all__:
        raise AttributeError(f"module 'handler.execution' has no attribute {name!r}")
    return getattr(import_module("handler.execution.run"), name)
