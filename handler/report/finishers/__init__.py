"""The registered finishers: work done once the shards are merged, run by the pipeline in this order.

A new finisher is one module (here, or in report/exports/ for a file for other tools) that defines
a `Finisher` (handler/sections/finishing.py), and one line in `FINISHERS`:

    CROPS: Final = Finisher("crops", ExactPass(choose), make, (CROPS_PART,))

- `needs` says what it reads besides the merged run (`Merged`: inputs, costs, dataset names, the
  merged `EvaluationState`):
  - `MERGED`: nothing more;
  - `ExactPass(choose)`: `choose(merged)` returns the asset ids it wants (all of them, a sample, the
    few the page lists), decided from the merged state; the pipeline makes ONE extra exact pass over
    the union of every finisher's ids, and `finishing.images.images(finishing.chosen)` yields each of
    its images as (`PassedShard`, image): the image's paired boxes (`passed.paired`: classes,
    confidences, sizes, asset ids) and its evaluation (`passed.evaluation`: matches and outcomes,
    kept predictions), exactly as the full run saw them;
  - `FINDINGS`: the built findings too (`finishing.built()`), for a part that restates them.
- `phase` (optional): one of the pipeline's PHASES, in which it runs, timed apart from the
  scoring (`PICTURES`: "draw images");
- `finish(finishing)` returns `Finished(parts, data)`: `parts` maps each `ReportPart` it declared in
  the finisher's `parts` to its content (a file stored with the report, listed in its manifest,
  read back with `prelabel-eval show`); `data` is a value for the findings, which a section reads
  with `facts.finished(ItsType)` (finishers on the findings give none: the findings are built).

The functions are module-level, the data plain values: the same run gives the same report.
"""

from __future__ import annotations

from typing import Final

from handler.features.recommendation.finisher import RECOMMENDATION_SPREAD
from handler.features.review.finisher import REVIEW_QUEUE
from handler.features.sketches.finisher import PICTURES, SKETCHES, SKETCHES_JSON
from handler.report.exports.class_map_json import CLASS_MAP_JSON
from handler.report.exports.routing_json import ROUTING_JSON
from handler.report.finishers.findings_json import FINDINGS_JSON
from handler.report.finishers.report_page import REPORT_PAGE
from handler.report.publish import LEDGER, OUTCOMES, ReportPart
from handler.sections.finishing import Finisher

FINISHERS: Final[tuple[Finisher, ...]] = (
    SKETCHES,
    RECOMMENDATION_SPREAD,
    PICTURES,
    FINDINGS_JSON,
    REPORT_PAGE,
    SKETCHES_JSON,
    ROUTING_JSON,
    CLASS_MAP_JSON,
    REVIEW_QUEUE,
)
# Every part a report may hold, by key: the ledger the shards write (the JSON lines of a report
# from before it), then the finishers'.
REPORT_PARTS: Final[dict[str, ReportPart]] = {
    part.key: part
    for part in (LEDGER, OUTCOMES, *(part for finisher in FINISHERS for part in finisher.parts))
}

__all__ = ["FINISHERS", "REPORT_PARTS"]
