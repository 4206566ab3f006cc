"""`review_queue.csv`: every shared image in the order a lead should review them (engine/review.py).

One row per image, most expected seconds first: its rank, asset id, expected seconds (rounded to
the millisecond), the share of the run's expected seconds up to and including it, its kept
predictions of uncertain confidence, and its boxes by the labeler's action. Written from the
merged state's per-image counts: columns, not a loop over boxes; the csv module quotes the ids.
"""

from __future__ import annotations

import csv
import io
from typing import Final

import numpy as np

from handler.engine.review import ReviewQueue, review_queue
from handler.engine.timecost import ACTIONS
from handler.report.findings.sections.review import QUEUE_FILE
from handler.report.finishing import MERGED, Finished, Finisher, Finishing
from handler.report.publish import ReportPart

QUEUE_PART: Final = ReportPart("queue", QUEUE_FILE, "text/csv")
COLUMNS: Final = ("rank", "asset_id", "expected_seconds", "cumulative_share", "uncertain_boxes", *ACTIONS)


def queue_csv(queue: ReviewQueue) -> bytes:
    """The CSV text: a header line, then one line per image in review order."""
    order = queue.order
    seconds = queue.seconds[order]
    total = float(seconds.sum())
    cumulative = np.cumsum(seconds) / total if total else np.zeros(len(order))
    columns = (
        range(1, len(order) + 1),
        np.asarray(queue.asset_ids, dtype=object)[order].tolist(),
        np.round(seconds, 3).tolist(),
        np.round(cumulative, 4).tolist(),
        queue.uncertain[order].tolist(),
        *queue.counts[order].T.tolist(),  # Outcome order is ACTIONS order
    )
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows(zip(*columns, strict=True))
    return text.getvalue().encode("utf-8")


def _queue(finishing: Finishing) -> Finished:
    merged = finishing.merged
    return Finished({QUEUE_PART: queue_csv(review_queue(merged.state, merged.costs))})


REVIEW_QUEUE: Final = Finisher("review_queue.csv", MERGED, _queue, (QUEUE_PART,))
