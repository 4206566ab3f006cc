"""Every sentence the product builds from figures, walked through the grammar cases: 0, 1 and
many; an interval whose ends are equal; negative and zero figures. None may say a broken phrase
("1 images", "5 min to 5 min", "save 0 s", "B - A -0.15", "apply it with review")."""

from __future__ import annotations

import html
import itertools
import re
from pathlib import Path
from typing import Any, Final

import numpy as np
import pytest
from helpers.builders import annotation, asset, write_json
from helpers.paths import EXAMPLES

from handler.cli import findings_summary
from handler.engine.exactsum import ExactSum
from handler.engine.outcomes import Outcome, Tally
from handler.features.reading.section import AppliedOption, OtherReading
from handler.features.recommendation.section import RecommendedClass, keep_given, says
from handler.features.time.section import TimeSaved
from handler.features.warnings.section import reading_warning
from handler.inputs import parse_inputs
from handler.pipeline import run
from handler.report.findings.build import lean, time_clause
from handler.report.findings.compare_findings import (
    BoxTransitions,
    Comparison,
    ComparisonContext,
    ScoreDifference,
    Side,
    TimeDifference,
    compare_summary,
    compare_verdict,
)
from handler.report.page.html import render_html
from handler.sections.wording import (
    MINUS,
    between,
    change,
    counted,
    duration,
    ends,
    give_or_take,
    how_often,
    saved_time,
    saving,
    score_text,
    short_name,
    signed,
    tail_of,
)
from handler.storage.local import LocalStore

BROKEN: Final = {
    "a plural after 1": re.compile(rf"(?<![\d.,]){1} (?:[a-z-]+ )?(?:images|boxes|classes|objects|pairs)\b"),
    "a singular after 0 or many": re.compile(
        r"(?<![\d.,\-\u2212+])(?:0|[2-9]|\d\d+) (?:image|box|class|object|pair)\b(?!-)"
    ),
    "equal interval ends": re.compile(
        r"(?<![\w.])([\d.\u2212+-]+(?: (?:s|min|h \d+ min))?) (?:to|and|\u2013) \1(?![\w.])"
        r"(?! (?:lower|higher|more|less))"
    ),
    "a zero time saved": re.compile(r"\b(?:save|saves|saved)(?: about)? 0 s\b|\b0 s saved\b"),
    "two signs in a row": re.compile(r"[-\u2212+] ?[-\u2212]\d|B - A [-\u2212+]"),
    "a machine interval": re.compile(r"\d+% interval"),
    "a verb after 'with'": re.compile(r"\bwith (?:review|pass|apply)\b"),
}
SECONDS: Final = (0.0, 0.4, 1.0, 45.0, 60.0, 300.0, 8280.0, -300.0)
COUNTS: Final = (0, 1, 2, 462)


def _broken(sentence: str) -> list[str]:
    return [name for name, pattern in BROKEN.items() if pattern.search(sentence)]


def assert_reads(sentence: str) -> None:
    assert _broken(sentence) == [], sentence


@pytest.mark.parametrize(
    ("sentence", "name"),
    [
        ("on 1 images", "a plural after 1"),
        ("2 image", "a singular after 0 or many"),
        ("95% interval 5 min to 5 min", "equal interval ends"),
        ("save 0 s (95% interval 0 s to 0 s)", "a zero time saved"),
        ("B - A -0.15", "two signs in a row"),
        ("apply it with review the report's class_map.json", "a verb after 'with'"),
    ],
)
def test_the_checker_catches_the_phrases_of_the_issue(sentence: str, name: str) -> None:
    assert name in _broken(sentence)


@pytest.mark.parametrize("count", COUNTS)
def test_counted_agrees_with_its_count(count: int) -> None:
    assert_reads(counted(count, "image") + " " + counted(count, "class", "classes"))
    assert counted(1, "box", "boxes") == "1 box" and counted(2, "box", "boxes") == "2 boxes"


@pytest.mark.parametrize("seconds", SECONDS)
def test_times_saved_and_lost_read(seconds: float) -> None:
    for said in (
        f"to save {saved_time(seconds)}",
        saving(seconds),
        f"B saves {change(seconds, duration, 'more', 'less')}",
    ):
        assert_reads(said)
    assert "-" not in saved_time(seconds) and "-" not in saving(seconds)  # a loss is said as one
    assert (saved_time(seconds) == "no time") == (round(seconds) == 0)


@pytest.mark.parametrize(
    ("low", "high"), list(itertools.combinations_with_replacement((-0.12, 0.0, 0.004, 0.3), 2))
)
def test_intervals_read_with_equal_and_signed_ends(low: float, high: float) -> None:
    for say in (signed, score_text, saved_time, duration):
        assert_reads(f"the score, {between(low, high, say)}")
        assert_reads(f"save 5 min{give_or_take(high, low, high, say)}")
        assert_reads(f"a class's interval {ends(low, high, say)}")
    assert between(0.3, 0.3, score_text) == "0.30, 19 times in 20"
    assert give_or_take(300.0, 300.0, 310.0, saved_time) == ""  # every end says 5 min: nothing to add


def test_the_small_formats() -> None:
    assert (signed(-0.15), signed(0.15), signed(-0.001)) == (f"{MINUS}0.15", "+0.15", "0.00")
    assert (how_often(0.95), how_often(0.99), how_often(0.9)) == (
        "19 times in 20",
        "99 times in 100",
        "9 times in 10",
    )
    assert duration(-120) == f"{MINUS}2 min"
    assert tail_of("COCO_val2014_000000000164.jpg") == "\u2026000000000164.jpg"
    assert tail_of("a.jpg") == "a.jpg" and len(tail_of("x" * 40)) == 20
    assert (
        short_name("tests/data/instances.json") == "instances.json"
        and short_name("s3://b/labels/") == "labels/"
    )


def _class(name: str, threshold: float | None) -> RecommendedClass:
    action = "draw" if threshold is None else "pre-label"
    return RecommendedClass(
        class_name=name,
        action=action,
        threshold=threshold,
        own_threshold=threshold,
        own=True,
        boxes=40,
        seconds_saved_vs_single=60.0,
    )


@pytest.mark.parametrize("saved", (0.0, 1.0, 300.0, 8280.0, -60.0))
@pytest.mark.parametrize("interval", [None, (0.0, 0.0), (240.0, 360.0), (300.0, 300.0), (-60.0, 60.0)])
@pytest.mark.parametrize("classes", [(), (_class("person", 0.35),), (_class("14", None),)])
@pytest.mark.parametrize(("single", "used_saved"), [(0.5, 0.0), (0.5, 300.0), (0.45, -120.0), (0.0, 280.0)])
def test_the_recommendation_reads(
    saved: float,
    interval: tuple[float, float] | None,
    classes: tuple[RecommendedClass, ...],
    single: float,
    used_saved: float,
) -> None:
    assert_reads(says(classes, single, max(saved, used_saved), interval, 0.5, used_saved))


@pytest.mark.parametrize(("saved", "scratch"), [(0.0, 0.0), (0.3, 60.0), (-720.0, 3900.0), (2760.0, 3900.0)])
@pytest.mark.parametrize(("fn", "fp"), list(itertools.product(COUNTS, COUNTS)))
def test_the_verdict_s_clauses_read(saved: float, scratch: float, fn: int, fp: int) -> None:
    time = TimeSaved.model_construct(
        saved_seconds=saved, from_scratch_seconds=scratch, with_predictions_seconds=scratch - saved
    )
    counts = np.zeros(len(Outcome), dtype=np.int64)
    counts[Outcome.FALSE_NEGATIVE], counts[Outcome.FALSE_POSITIVE] = fn, fp
    assert_reads(f"{time_clause(time)}; {lean(Tally(counts, ExactSum()))}.")


def _comparison(
    score: tuple[float, float, float], seconds: tuple[float, float, float], images: int
) -> Comparison:
    better = "B" if score[1] > 0 else "A" if score[2] < 0 else "neither"
    side: Any = Side.model_construct(
        dataset="p.json", assistance_score=0.5, grade="Partial assist", saved_seconds=seconds[0]
    )
    context = ComparisonContext.model_construct(
        same_predictions=False, level=0.95, a=side, b=side, images=images, resamples=1000, seed=1
    )
    moved = BoxTransitions.model_construct(changes=(), worse=images, better=0, boxes=images)
    return Comparison.model_construct(
        better=better,
        difference=ScoreDifference.model_construct(score=score[0], low=score[1], high=score[2]),
        time_saved_difference=TimeDifference.model_construct(
            seconds=seconds[0], low=seconds[1], high=seconds[2]
        ),
        transitions=moved,
        context=context,
        scored_on="boxes",
        scored_on_note=None,
    )


@pytest.mark.parametrize(
    "score",
    [(-0.09, -0.12, -0.07), (0.0, 0.0, 0.0), (0.01, -0.02, 0.03), (0.15, 0.1, 0.2), (0.001, 0.0, 0.002)],
)
@pytest.mark.parametrize("seconds", [(-1500.0, -2100.0, -1020.0), (0.0, 0.0, 0.0), (60.0, -30.0, 120.0)])
@pytest.mark.parametrize("images", (1, 100))
def test_compare_s_sentences_read(
    score: tuple[float, float, float], seconds: tuple[float, float, float], images: int
) -> None:
    found = _comparison(score, seconds, images)
    assert_reads(compare_verdict(found))
    for line in compare_summary(found).splitlines():
        assert_reads(line)


@pytest.mark.parametrize("images", COUNTS[1:])
@pytest.mark.parametrize(("low", "high"), [(0.08, 0.14), (0.1, 0.1)])
@pytest.mark.parametrize("value", ["class_map.json", "xyxy"])
def test_the_reading_warning_reads(images: int, low: float, high: float, value: str) -> None:
    option = AppliedOption(
        option="PRED_CLASS_MAP" if value.endswith(".json") else "PRED_BOX", flag="--pred-x", value=value
    )
    found = OtherReading.model_construct(
        family="classes", side="pred", says="the predictions read otherwise", options=(option,),
        option=option.option, flag=option.flag, value=value, images=images, score_as_read=0.22,
        grade_as_read="Minimal assist", score=0.32, grade="Partial assist", gain_low=low, gain_high=high,
        level=0.99, candidates=3, class_map={},
    )  # fmt: skip
    assert_reads(reading_warning(found).message)


def test_a_gain_agrees_with_the_times_it_is_the_difference_of() -> None:
    """4 h 34 min against 2 h 18 min is 2 h 16 min more, whatever the seconds behind each."""
    said = says((), 0.0, 16_470.0, None, 0.5, 8_270.0)
    assert said.endswith("to save 4 h 34 min, 2 h 16 min more than at the 0.5 given")


def _page_text(page: str) -> str:
    page = re.sub(r"<style>.*?</style>", " ", page, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


@pytest.mark.parametrize("pred", ["predictions.jsonl", "one"])
def test_the_page_and_the_cli_summary_read(tmp_path: Path, pred: str) -> None:
    """The page's templates and the CLI's summary on the shipped example, and on one image with
    one missed box (the singulars, a zero saving)."""
    gt, predictions = EXAMPLES / "gt.json", EXAMPLES / pred
    if pred == "one":
        gt = write_json(
            tmp_path / "gt.json", {"assets": [asset("only.jpg", [annotation(("car", 10, 10, 50, 50))])]}
        )
        predictions = write_json(
            tmp_path / "pred.json",
            {"assets": [asset("only.jpg", [annotation(("car", 60, 60, 90, 90), 0.9)])]},
        )
    result = run(
        parse_inputs({"GT_DATASET": str(gt), "PRED_DATASET": str(predictions)}), LocalStore(tmp_path / "s")
    )
    page = _page_text(render_html(result.findings, result.page))
    assert_reads(page)
    assert_reads(findings_summary(result.findings, str(tmp_path)))


@pytest.mark.parametrize(
    "gain", [None, (0.0, 0.0, 0.0), (0.2, -0.1, 0.4), (27.0, -4.0, 76.0), (300.0, 300.0, 300.0)]
)
@pytest.mark.parametrize(("used", "used_saved"), [(0.5, 2760.0), (0.0, 0.0), (0.5, -60.0)])
def test_keeping_the_given_threshold_reads(
    gain: tuple[float, float, float] | None, used: float, used_saved: float
) -> None:
    assert_reads(keep_given(used, used_saved, gain))
