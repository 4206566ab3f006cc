"""Objects written as a box and the parts of their outline, one region each, with nothing linking
them but their order and where they lie: label-studio-sdk's COCO import writes each COCO object
so (its `bbox` as a rectangle, then each polygon of its `segmentation` as a polygon region of the
same label), and a Label Studio JSON-MIN export keeps each kind's regions in that order.

One annotation's boxes in order and its parts in order: each box may take a run of consecutive
parts (of its label, each within it) whose bounds together are the box (to `TOLERANCE` pixel);
of the ways to take runs in order, the one joining the most boxes, then taking the most parts,
is kept. A box and its run are one object, its mask the parts' union, the box not an object of
its own; a box that takes no run, and a part that no box takes, are objects by themselves.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from handler.boxes import BoolArray, FloatArray, IntArray

# Pixels a written box may stand off its parts' bounds: what percent of the image written as
# floating point and scaled back costs, far below any drawn difference.
TOLERANCE: Final = 1e-3


def objects_of(group: IntArray, is_box: BoolArray, is_part: BoolArray, xyxy: FloatArray) -> IntArray:
    """Each row's object: its own row, the row of the first part of its object (a part), or -1
    (a box that is its parts' box). Rows are in the order written; `group` numbers the rows of
    one annotation and one label (-1: none); `xyxy` are the boxes' corners and the parts' bounds,
    in pixels."""
    owner = np.arange(len(group), dtype=np.int64)
    usable = np.isfinite(xyxy).all(axis=1) & (group >= 0)
    boxes, parts = usable & is_box, usable & is_part
    both = np.isin(group, np.intersect1d(group[boxes], group[parts])) & (boxes | parts)
    rows = np.flatnonzero(both)
    if not len(rows):
        return owner
    rows = rows[np.argsort(group[rows], kind="stable")]  # by group, in the order written
    starts = np.flatnonzero(np.diff(group[rows], prepend=-2))
    for first, last in zip(starts.tolist(), np.append(starts[1:], len(rows)).tolist(), strict=True):
        mine = rows[first:last]  # one annotation's label: a few regions
        _join(owner, mine[is_box[mine]], mine[is_part[mine]], xyxy)
    return owner


def _join(owner: IntArray, boxes: IntArray, parts: IntArray, xyxy: FloatArray) -> None:
    """The boxes and the runs of parts that make them up (see the module): of the ways to take
    runs in order, the one joining the most boxes, then taking the most parts."""
    within = _within(xyxy[boxes], xyxy[parts])
    runs = [_runs(xyxy[box], within[b], xyxy[parts]) for b, box in enumerate(boxes.tolist())]
    if _each_box_its_next_run(owner, boxes, parts, runs):
        return
    n, m = len(boxes), len(parts)
    # best[i][j]: (boxes joined, parts taken) from box i and part j on, and the run box i takes
    best = [[(0, 0, 0)] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m, -1, -1):
            options = [(*best[i + 1][j][:2], 0), (*best[i][j + 1][:2], -1) if j < m else (-1, -1, -1)]
            options += [(best[i + 1][j + k][0] + 1, best[i + 1][j + k][1] + k, k) for k in runs[i].get(j, ())]
            best[i][j] = max(options)
    i, j = 0, 0
    while i < n and j <= m:
        run = best[i][j][2]
        if run > 0:
            owner[boxes[i]], owner[parts[j : j + run]] = -1, parts[j]
        i, j = (i, j + 1) if run < 0 else (i + 1, j + run)


def _each_box_its_next_run(
    owner: IntArray, boxes: IntArray, parts: IntArray, runs: list[dict[int, list[int]]]
) -> bool:
    """The plain case, the converter's own: every box takes the longest run at the next part and
    every part is taken (then no other way joins more). False, nothing changed: not so."""
    starts = [0]
    for found in runs:
        if starts[-1] not in found:
            return False
        starts.append(starts[-1] + max(found[starts[-1]]))
    if starts[-1] != len(parts):
        return False
    for box, first, last in zip(boxes.tolist(), starts[:-1], starts[1:], strict=True):
        owner[box], owner[parts[first:last]] = -1, parts[first]
    return True


def _runs(box: FloatArray, within: BoolArray, parts: FloatArray) -> dict[int, list[int]]:
    """For each first part j, the lengths of the runs of parts from j (each within the box) whose
    bounds together are the box."""
    target = box.tolist()
    bounds = parts.tolist()
    found: dict[int, list[int]] = {}
    for j in np.flatnonzero(within).tolist():
        x0, y0, x1, y1 = bounds[j]
        for k in range(j, len(bounds)):
            if not within[k]:
                break
            x0, y0 = min(x0, bounds[k][0]), min(y0, bounds[k][1])
            x1, y1 = max(x1, bounds[k][2]), max(y1, bounds[k][3])
            if max(abs(a - b) for a, b in zip((x0, y0, x1, y1), target, strict=True)) <= TOLERANCE:
                found.setdefault(j, []).append(k - j + 1)
    return found


def _within(outer: FloatArray, inner: FloatArray) -> BoolArray:
    """(outer, inner): inner box i lies within outer box o, to `TOLERANCE`."""
    low = np.all(outer[:, None, :2] <= inner[None, :, :2] + TOLERANCE, axis=2)
    high = np.all(outer[:, None, 2:] >= inner[None, :, 2:] - TOLERANCE, axis=2)
    within: BoolArray = low & high
    return within
