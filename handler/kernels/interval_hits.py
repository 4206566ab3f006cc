"""Whether positions fall in intervals, group by group, in C (`src/interval_hits.c`): the masks'
outlines sample each mask's pixels at a grid of cells, one walk through its runs."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from handler.kernels import I64, SIZE, U8, kernel

_HITS = kernel("interval_hits", I64, I64, SIZE, I64, SIZE, I64, SIZE, U8, returns=None)


def interval_hits(
    group: npt.NDArray[np.int64],
    start: npt.NDArray[np.int64],
    stop: npt.NDArray[np.int64],
    positions: npt.NDArray[np.int64],
) -> npt.NDArray[np.bool_]:
    """(groups, per) whether `positions[g, j]` is in one of group g's intervals `[start, stop)`:
    the intervals are sorted by `group`, each group's ascending and disjoint (a group with none
    has no hit). Ascending positions within a group are the fast case."""
    groups, per = positions.shape
    first = np.searchsorted(group, np.arange(groups + 1)).astype(np.int64)
    hit = np.zeros((groups, per), dtype=np.uint8)
    if groups and per:
        _HITS(
            np.ascontiguousarray(start, dtype=np.int64),
            np.ascontiguousarray(stop, dtype=np.int64),
            min(len(start), len(stop)),
            first,
            groups,
            np.ascontiguousarray(positions, dtype=np.int64),
            per,
            hit,
        )
    return hit.view(np.bool_)
