"""Evaluation as a map over shards of whole assets and an exact merge (SPEC §11).

`evaluate_datasets` plans the shards, maps `run_shard` over them with the chosen executor
(in this process, a local process pool, or a dask cluster) and merges the partial states.
Each shard writes its own outcome lines into the report's staging chunks, so only the
partial states come back.
"""

from handler.execution.run import Evaluated, ExecutionOptions, evaluate_datasets

__all__ = ["Evaluated", "ExecutionOptions", "evaluate_datasets"]
