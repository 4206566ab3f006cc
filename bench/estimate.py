"""A paper estimate of a 1B-box run on N Dask workers, from measured per-shard costs.

Formula (written into RESULTS.md with the numbers):

    S        = ceil(B / b)                    shards for B boxes at b boxes per shard
    wall(N)  = ceil(S / N) * (t + o) + S * m  waves of N shards, then the client's merge
    RSS(N)   = r per worker                   a worker holds one shard at a time

t and r are one shard's measured wall time and peak RSS; o is the per-task overhead of the
scheduler (task dispatch and the result's return) and m the client's merge of one shard's
tallies; both are assumptions, stated in the output, not measurements.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

TOTAL_BOXES: Final = 1_000_000_000
WORKERS: Final = (1, 2, 8, 32, 128)
TASK_OVERHEAD_S: Final = 0.005  # dask.distributed: a few ms per task, a small result back
MERGE_S: Final = 0.001  # adding one shard's outcome counts and sums on the client


@dataclass(frozen=True)
class ShardCost:
    seconds: float  # one shard's wall time on one core
    rss_mb: float  # peak RSS while evaluating one shard
    boxes: float  # GT + prediction boxes in one shard
    source: str  # where the numbers were measured


def wall_seconds(cost: ShardCost, workers: int, total_boxes: int = TOTAL_BOXES) -> float:
    shards = math.ceil(total_boxes / cost.boxes)
    return math.ceil(shards / workers) * (cost.seconds + TASK_OVERHEAD_S) + shards * MERGE_S


def estimate_lines(cost: ShardCost, total_boxes: int = TOTAL_BOXES) -> list[str]:
    shards = math.ceil(total_boxes / cost.boxes)
    rows = [f"| {n} | {wall_seconds(cost, n, total_boxes) / 60:.1f} | {cost.rss_mb:.0f} |" for n in WORKERS]
    return [
        f"Per shard ({cost.source}): t = {cost.seconds:.2f} s, r = {cost.rss_mb:.0f} MB, "
        f"b = {cost.boxes:,.0f} boxes; {total_boxes:,} boxes = S = {shards:,} shards. "
        f"Assumed: o = {TASK_OVERHEAD_S * 1e3:g} ms per task, m = {MERGE_S * 1e3:g} ms merge per shard.",
        "",
        "wall(N) = ceil(S / N) · (t + o) + S · m; RSS per worker = r (one shard at a time).",
        "",
        "| workers N | wall min | RSS per worker MB |",
        "|---:|---:|---:|",
        *rows,
        "",
        "Not in the estimate: reading the shards (S · bytes per shard over the store's bandwidth,",
        "in parallel across workers) and writing one outcome line per box (1B lines).",
    ]
