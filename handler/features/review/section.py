"""`review_queue`: the totals of the review queue and what its "uncertain" means (engine/review.py).

The queue's first rows are `images_with_most_work`; every image is in the report part
review_queue.csv (finisher.py beside this module). Shown in the work fragment.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import Field

from handler.engine.listed import listed_rows
from handler.engine.review import MIN_BIN_PREDICTIONS, RIGHT, UNCERTAIN_SHARES, ReviewQueue, pooled_shares
from handler.sections.context import RunFacts
from handler.sections.fields import Count, Score, Seconds, Section, Threshold
from handler.sections.shown import Shown
from handler.sections.wording import SHAPE_WORDS, ShapeWords, counted

QUEUE_FILE = "review_queue.csv"


class ConfidenceBin(Section):
    """The run's kept predictions with confidence from `low` up to `high`, and how often the
    labeler keeps them."""

    low: Threshold
    high: Threshold | None = Field(description="Null: up to any confidence (the last bin).")
    predictions: Count
    pooled_right_share: Score | None = Field(
        description="The share of right predictions (correct or shifted) it is judged by: of the adjacent "
        "bins pooled so that the share never falls as confidence rises (isotonic regression); null when "
        "there are none."
    )
    pooled_predictions: Count = Field(description="The predictions of that pool.")
    uncertain: bool = Field(
        description="pooled_right_share within uncertain_shares, of at least min_bin_predictions."
    )


class ReviewQueueTotals(Section):
    """Every shared image, most expected correction time first; its first rows are
    images_with_most_work, the whole queue is the report part review_queue.csv."""

    part: str = Field(description="The report part with every image's row (prelabel-eval show --queue).")
    images: Count = Field(description="Images in the queue: every shared image.")
    listed_seconds: Seconds = Field(
        description="The seconds of the images in images_with_most_work (of time.with_predictions_seconds, "
        "every image's added)."
    )
    uncertain_boxes: Count = Field(description="Kept predictions in an uncertain confidence bin.")
    images_with_uncertain_boxes: Count
    uncertain_shares: tuple[Score, Score] = Field(
        description="A bin is uncertain when this share of its predictions, or a share between, is right."
    )
    min_bin_predictions: Count = Field(description="A bin with fewer predictions is never uncertain.")
    confidence_bins: tuple[ConfidenceBin, ...] = Field(
        description="The sweep's steps from the threshold used up, over the kept predictions."
    )

    def uncertain_text(self, words: ShapeWords = SHAPE_WORDS["boxes"]) -> str:
        """`Uncertain: kept predictions with confidence 0.60 to 0.75, where this run's predictions
        are right 33 to 67 % of the time (75 boxes on 23 images).`"""
        low, high = (f"{share:.0%}".rstrip("%") for share in self.uncertain_shares)
        where = f"right {low} to {high} % of the time"
        spans = _spans(self.confidence_bins)
        if not spans:
            enough = f"of {self.min_bin_predictions} or more"
            return (
                f"No prediction is uncertain: at no confidence are this run's predictions {where} ({enough})."
            )
        boxes, images = (
            words.count(self.uncertain_boxes),
            counted(self.images_with_uncertain_boxes, "image", "images"),
        )
        spanned = f"with confidence {', '.join(spans)}, where this run's predictions are {where}"
        return f"Uncertain: kept predictions {spanned} ({boxes} on {images})."


def _spans(bins: tuple[ConfidenceBin, ...]) -> list[str]:
    """The runs of adjacent uncertain bins, as `0.60 to 0.75` (`0.95 and up` for the open end)."""
    spans: list[tuple[float, float | None]] = []
    for item in bins:
        if item.uncertain and spans and spans[-1][1] == item.low:
            spans[-1] = (spans[-1][0], item.high)
        elif item.uncertain:
            spans.append((item.low, item.high))
    return [f"{low:.2f} to {high:.2f}" if high is not None else f"{low:.2f} and up" for low, high in spans]


def _share(right: int, kept: int) -> float | None:
    return right / kept if kept else None


def _bins(queue: ReviewQueue) -> tuple[ConfidenceBin, ...]:
    kept = queue.by_outcome.sum(axis=1)
    right = queue.by_outcome[:, list(RIGHT)].sum(axis=1)
    pooled_right, pooled_kept = pooled_shares(right, kept)
    highs = [*queue.edges[1:].tolist(), None]
    columns = (
        queue.edges.tolist(),
        highs,
        kept.tolist(),
        pooled_right.tolist(),
        pooled_kept.tolist(),
    )
    return tuple(
        ConfidenceBin(
            low=low,
            high=high,
            predictions=n,
            pooled_right_share=_share(pr, pn),
            pooled_predictions=pn,
            uncertain=uncertain,
        )
        for (low, high, n, pr, pn), uncertain in zip(
            zip(*columns, strict=True), queue.uncertain_bin.tolist(), strict=True
        )
    )


def review_queue(facts: RunFacts) -> ReviewQueueTotals:
    queue = facts.queue
    listed = listed_rows(queue)
    return ReviewQueueTotals(
        part=QUEUE_FILE,
        images=len(queue.asset_ids),
        listed_seconds=float(queue.seconds[listed].sum()),
        uncertain_boxes=int(queue.uncertain.sum()),
        images_with_uncertain_boxes=int(np.count_nonzero(queue.uncertain)),
        uncertain_shares=(float(UNCERTAIN_SHARES[0]), float(UNCERTAIN_SHARES[1])),
        min_bin_predictions=MIN_BIN_PREDICTIONS,
        confidence_bins=_bins(queue),
    )


ReviewQueueSection = Annotated[ReviewQueueTotals, Shown(review_queue)]
