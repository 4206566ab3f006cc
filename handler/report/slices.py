"""Per-slice score, grade and interval (issue 13 item 5): named sets of images, from a file or tags.

A slice is a set of scored images: the asset ids a `--slices` file lists under a name, or the
images whose native asset `tags` carry a tag. Its figures are the merged per-image outcome
counts of those images, so they are exact for any split into shards.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final, cast

import numpy as np
import orjson

from handler.engine.bootstrap import bootstrap
from handler.engine.score import assistance_score, grade
from handler.engine.state import EvaluationState
from handler.engine.timecost import TimeCosts
from handler.errors import InputError
from handler.report.model import Grade, SliceRow, SliceSource
from handler.report.sections import outcome_counts

SliceFile = Mapping[str, Sequence[str]]
# Tag slices beyond this many (the most images first) are left out: the page stays readable.
MAX_TAG_SLICES: Final = 50


def read_slices(path: str) -> dict[str, tuple[str, ...]]:
    """A JSON object of slice name -> list of asset ids; anything else is the user's to fix."""
    try:
        document = orjson.loads(Path(path).read_bytes())
    except OSError as error:
        raise InputError(f"--slices {path}: cannot read it ({error.strerror})") from None
    except orjson.JSONDecodeError as error:
        raise InputError(f"--slices {path}: not JSON ({error})") from None
    valid = isinstance(document, dict) and all(
        isinstance(ids, list) and all(isinstance(i, str | int) for i in ids) for ids in document.values()
    )
    if not valid:
        raise InputError(f"--slices {path}: expected a JSON object of slice name -> list of asset ids")
    return {str(name): tuple(str(i) for i in ids) for name, ids in document.items()}


def _tag_slices(state: EvaluationState) -> list[tuple[str, list[int]]]:
    rows: dict[str, list[int]] = {}
    for row, tags in enumerate(state.asset_tags):
        for tag in tags:
            rows.setdefault(tag, []).append(row)
    ranked = sorted(rows.items(), key=lambda item: (-len(item[1]), item[0]))[:MAX_TAG_SLICES]
    return sorted(ranked)


def _row(
    name: str, source: SliceSource, rows: list[int], listed: int, state: EvaluationState, costs: TimeCosts
) -> SliceRow:
    counts = state.image_counts[np.asarray(rows, dtype=np.int64)]
    c, s, x, fp, fn = (int(v) for v in counts.sum(axis=0))
    total = c + s + x + fp + fn
    spread = bootstrap(counts, costs) if total else None
    return SliceRow(
        name=name,
        source=source,
        images=len(rows),
        unscored_assets=listed - len(rows),
        counts=outcome_counts(counts.sum(axis=0)),
        assistance_score=assistance_score(c, s, x, total),
        grade=cast(Grade, grade(c, s, x, total)),
        score_low=None if spread is None else spread.score[0],
        score_high=None if spread is None else spread.score[1],
    )


def slices(state: EvaluationState, listed: SliceFile, costs: TimeCosts) -> tuple[SliceRow, ...]:
    """The file's slices in its order, then a slice per asset tag, by name."""
    index = {asset_id: row for row, asset_id in enumerate(state.asset_ids)}
    found = []
    for name, ids in listed.items():
        unique = list(dict.fromkeys(ids))
        rows = sorted(index[i] for i in unique if i in index)
        found.append(_row(name, "file", rows, len(unique), state, costs))
    found += [_row(tag, "tag", rows, len(rows), state, costs) for tag, rows in _tag_slices(state)]
    return tuple(found)
