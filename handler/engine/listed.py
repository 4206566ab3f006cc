"""What the page lists, chosen from the merged state: the images with the most work (the review
queue's first) and the ground-truth suspects. The sections list them and the sketches' finisher
draws the same images, so both ask here."""

from __future__ import annotations

from typing import Final

from handler.boxes import IntArray
from handler.engine import breakdowns
from handler.engine.analyses.gt_errors import GT_ERRORS
from handler.engine.analyses.per_image import PER_IMAGE
from handler.engine.counts import OutcomeCounts
from handler.engine.gt_errors import SuspectTally
from handler.engine.review import ReviewQueue
from handler.engine.state import EvaluationState
from handler.engine.timecost import TimeCosts

TOP_IMAGES: Final = 10


def most_work_rows(state: EvaluationState, costs: TimeCosts) -> IntArray:
    """The rows (in asset order) of the images that take the labeler longest, most first: the
    review queue's first (`listed_rows`), from the per-image counts alone."""
    return breakdowns.most_work(OutcomeCounts(state.of(PER_IMAGE).counts).labeler_seconds(costs), TOP_IMAGES)


def listed_rows(queue: ReviewQueue) -> IntArray:
    """The review queue's rows that the page lists: its first TOP_IMAGES with any seconds."""
    return breakdowns.most_work(queue.seconds, TOP_IMAGES)


def suspects(state: EvaluationState, withheld: bool = False) -> SuspectTally:
    """The suspects the report lists: none while another reading explains the misses (`withheld`)."""
    found = state.of(GT_ERRORS)
    return found.none() if withheld else found
