"""The page's savings story: (score and time apart), per class by time left, card captions."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
from helpers.paths import EXAMPLES, THIRD_PARTY

from handler import TimeCosts
from handler.engine.counts import OutcomeCounts
from handler.inputs import parse_inputs
from handler.pipeline import RunResult, run
from handler.report.page.html import render_html
from handler.sections.wording import MINUS
from handler.storage.local import LocalStore

COCO = THIRD_PARTY / "coco_val2014_100"
COSTLY = TimeCosts(nudge=60, relabel=60, delete=30)  # correcting costs more than drawing


def _run(tmp_path: Path, gt: Path, pred: Path, costs: TimeCosts | None = None, **extra: str) -> RunResult:
    inputs = parse_inputs({"GT_DATASET": str(gt), "PRED_DATASET": str(pred), **extra})
    return run(inputs, LocalStore(tmp_path / "store"), costs=costs)


def test_the_verdict_says_the_graded_run_then_the_one_recommendation(tmp_path: Path) -> None:
    """At 0.5 the best policy's gain is within the noise of the images: the 0.5 given is kept."""
    findings = _run(tmp_path, EXAMPLES / "gt.json", EXAMPLES / "predictions.jsonl").findings
    assert findings.verdict == (
        f"Assistance score {findings.assistance_score:.2f} ({findings.efficiency_level}, "
        "borderline with Strong assist): pre-labeling saves about 46 min of the 65 min it takes to draw "
        "every box; what is left is balanced between drawing and deleting (26 missed objects, "
        "32 invented boxes)."
    )
    assert findings.headline() == (
        f"{findings.verdict} Recommended: keep the 0.5 given, since no other threshold saves clearly more "
        f"than its 46 min (the best would save 27 s more, between {MINUS}4 s and 76 s, 19 times in 20)."
    )
    assert findings.recommendation.kept == 0.5


def test_advice_beyond_the_noise_changes_the_threshold(tmp_path: Path) -> None:
    """At 0.8 the policy's gain excludes zero: it is recommended, with its interval."""
    findings = _run(
        tmp_path, EXAMPLES / "gt.json", EXAMPLES / "predictions.jsonl", CONFIDENCE_THRESHOLD="0.8"
    ).findings
    assert findings.recommendation.kept is None
    assert findings.recommendation.says == (
        "pre-label at ≥ 0.45, with person at ≥ 0.35, to save 47 min (between 38 min and 56 min, 19 times "
        "in 20), 20 min more than at the 0.8 given"
    )


def test_a_negative_saving_is_said_in_plain_words(tmp_path: Path) -> None:
    findings = _run(tmp_path, EXAMPLES / "gt.json", EXAMPLES / "predictions.jsonl", COSTLY).findings
    assert findings.time.saved_seconds < 0
    assert (
        "pre-labeling would cost about 12 min more than drawing every box (77 min instead of 65 min)"
    ) in findings.verdict
    page = render_html(findings)
    assert page.count("12 min more") == 1  # the verdict says it; the figures do not again
    assert not re.search(r"[-\u2212]\d+ (s|min)\b", page), "a negative duration is on the page"


def test_per_class_rows_go_by_labeler_time_left_then_score(tmp_path: Path) -> None:
    gt, pred = COCO / "instances_val2014_100.json", COCO / "instances_val2014_fakebbox100_results.json"
    rows = _run(tmp_path, gt, pred).findings.per_class
    counts = np.array([[getattr(r.counts, k) for k in r.counts.outcomes()] for r in rows])
    seconds = OutcomeCounts(counts).labeler_seconds(TimeCosts())
    keys = list(zip(-seconds, [r.assistance_score for r in rows], strict=True))
    assert len(rows) > 10 and keys == sorted(keys)
    assert sum(r.counts.total for r in rows[:5]) > 5 * 4, "the first classes are where the work is"


def test_each_card_caption_carries_the_thresholds_of_the_run(tmp_path: Path) -> None:
    inputs = parse_inputs(
        {
            "GT_DATASET": str(EXAMPLES / "gt.json"),
            "PRED_DATASET": str(EXAMPLES / "predictions.jsonl"),
            "IOU_MIN": "0.5",
            "IOU_PERFECT": "0.9",
        }
    )
    page = render_html(run(inputs, LocalStore(tmp_path / "store")).findings)
    captions = re.findall(r'data-field="caption">([^<]*)<', page)
    assert captions[:3] == [
        "same class, IoU ≥ 0.9",
        "same class, 0.5 ≤ IoU &lt; 0.9",
        "other class, IoU ≥ 0.5",
    ]
    assert len(captions) == 6


def test_a_zero_threshold_reads_as_keeping_every_prediction(tmp_path: Path) -> None:
    gt, pred = COCO / "instances_val2014_100.json", COCO / "instances_val2014_fakebbox100_results.json"
    findings = _run(tmp_path, gt, pred, CONFIDENCE_THRESHOLD="0.5").findings
    assert findings.recommendation.kept is None and findings.recommendation.threshold == 0
    assert "Recommended: pre-label at ≥ 0 (every prediction kept) to save" in findings.headline()


def test_no_advice_stands_on_a_side_mostly_skipped(tmp_path: Path) -> None:
    """Confidences the node cannot read (negative: no scale holds them) skip most predictions: the
    verdict says to fix that first, and the threshold given is kept for every class."""
    gt, results = COCO / "instances_val2014_100.json", COCO / "instances_val2014_fakebbox100_results.json"
    negated = tmp_path / "negated.json"
    negated.write_text(json.dumps([{**r, "score": -r["score"]} for r in json.loads(results.read_text())]))
    findings = _run(tmp_path, gt, negated, CONFIDENCE_THRESHOLD="0.5").findings
    assert findings.other_reading is None and findings.recommendation.kept == 0.5
    headline = findings.headline()
    assert headline.startswith("Fix how the predictions are read first: ")
    assert "(confidence out of range, see the warnings)" in headline
    assert ". As read, assistance score 0.00 (Minimal assist)" in headline
