"""`review_queue.csv`: every shared image in the order a lead should review them (engine/review.py).

One row per image, most expected seconds first: its rank, asset id, expected seconds (rounded to
the millisecond), the share of the run's expected seconds up to and including it, its kept
predictions of uncertain confidence, and its boxes by the labeler's action. Written from the
merged state's per-image counts, column blocks at once: orjson writes each numeric block, and
C-level replace / split cut it into one piece per row (the csv module's writer is far slower),
so no Python code runs per box, and only the asset ids that need quoting per image.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt
import orjson

from handler.boxes import FloatArray, IntArray
from handler.engine.review import ReviewQueue, review_queue
from handler.engine.timecost import ACTIONS
from handler.features.review.section import QUEUE_FILE
from handler.sections.finishing import MERGED, Finished, Finisher, Finishing
from handler.sections.parts import ReportPart

QUEUE_PART: Final = ReportPart("queue", QUEUE_FILE, "text/csv")
COLUMNS: Final = ("rank", "asset_id", "expected_seconds", "cumulative_share", "uncertain_boxes", *ACTIONS)
# A field holding one of these is quoted (RFC 4180); NUL separates the ids while they are cut.
_NEEDS_QUOTES: Final = re.compile(r'[",\r\n\x00]')
_CUT: Final = b"\x00"
# Images written at a time: their fields' bytes objects stay a small transient of a big run's.
BLOCK_ROWS: Final = 4096


def _rows(block: IntArray | FloatArray, before: bytes, after: bytes) -> list[bytes]:
    """`before` + the row's values joined by commas + `after`, for each row of a 2-D block."""
    inner = orjson.dumps(np.ascontiguousarray(block), option=orjson.OPT_SERIALIZE_NUMPY)[2:-2]
    return (before + inner.replace(b"],[", after + _CUT + before) + after).split(_CUT)


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if _NEEDS_QUOTES.search(text) else text


def _ids(asset_ids: Sequence[str]) -> list[bytes]:
    """Each id as a CSV field: as it is, unless an id needs quoting (then each is looked at)."""
    joined = "\x00".join(asset_ids)
    # A substring test per special character is a memchr each, far quicker than a regex here.
    plain = joined.count("\x00") == len(asset_ids) - 1 and not any(c in joined for c in '",\r\n')
    if plain:
        return joined.encode("utf-8").split(_CUT)
    return [_quoted(asset_id).encode("utf-8") for asset_id in asset_ids]


def queue_csv(queue: ReviewQueue) -> bytes:
    """The CSV text: a header line, then one line per image in review order."""
    order = queue.order
    header = ",".join(COLUMNS).encode("ascii") + b"\n"
    if not len(order):
        return header
    seconds = queue.seconds[order]
    total = float(seconds.sum())
    cumulative = np.cumsum(seconds) / total if total else np.zeros(len(order))
    asset_ids = np.asarray(queue.asset_ids, dtype=object)
    blocks = (
        _block_lines(queue, asset_ids, order[start : start + BLOCK_ROWS], seconds, cumulative, start)
        for start in range(0, len(order), BLOCK_ROWS)
    )
    return header + b"".join(blocks)


def _block_lines(
    queue: ReviewQueue,
    asset_ids: npt.NDArray[np.object_],
    order: IntArray,
    seconds: FloatArray,
    cumulative: FloatArray,
    start: int,
) -> bytes:
    """The lines of the images `order`, ranked from `start` + 1 (`seconds` and `cumulative` are the
    whole queue's, in review order): a bytes object per field exists for one block at a time, not
    for every image."""
    stop = start + len(order)
    pieces = (
        _rows(np.arange(start + 1, stop + 1)[:, None], b"", b","),
        _ids(asset_ids[order].tolist()),
        _rows(
            np.column_stack((np.round(seconds[start:stop], 3), np.round(cumulative[start:stop], 4))),
            b",",
            b",",
        ),
        # Outcome order is ACTIONS order
        _rows(np.column_stack((queue.uncertain[order], queue.counts[order])), b"", b"\n"),
    )
    grid = np.empty((len(order), len(pieces)), dtype=object)
    for column, piece in enumerate(pieces):
        grid[:, column] = piece
    return b"".join(grid.ravel().tolist())


def work_seconds(queue: bytes) -> dict[str, float]:
    """Each image's expected seconds, read back from the CSV text (`prelabel-eval export`, for
    every target: rows as lists, not a dict each, which is faster)."""
    rows = csv.reader(io.StringIO(queue.decode("utf-8"), newline=""))
    header = next(rows, [])  # an empty file: no header, refused below
    asset, seconds = header.index("asset_id"), header.index("expected_seconds")
    return {row[asset]: float(row[seconds]) for row in rows}


def _queue(finishing: Finishing) -> Finished:
    merged = finishing.merged
    return Finished({QUEUE_PART: queue_csv(review_queue(merged.state, merged.costs))})


REVIEW_QUEUE: Final = Finisher("review_queue.csv", MERGED, _queue, (QUEUE_PART,))
