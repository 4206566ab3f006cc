"""The page's new sections, findings against the updated schema, and the time-cost options."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from helpers.builders import annotation, asset, write_json
from helpers.findings_schema import validate_document
from markupsafe import escape
from pydantic import ValidationError

import handler.features
from handler import PrelabelingEfficiency, TimeCosts
from handler.cli import main as cli_main
from handler.inputs import parse_inputs
from handler.pipeline import run
from handler.report.findings import Findings
from handler.report.page.html import duration, render_html
from handler.sections.charts import sweep_figure
from handler.sections.shown import features
from handler.sections.wording import tail_of
from handler.storage.local import LocalStore

HOSTILE = "<img src=x onerror=alert(1)>"
QUOTED = """street "quoted" 'id' <b>&amp; 0001.jpg"""


def registered_folds() -> list[str]:
    """The folds the features' fragments open, in the registry's order (what no figure shows)."""
    return [
        fold
        for spec in features(Findings)
        for fold in re.findall(
            r'<details class="fold" data-section="(\w+)"',
            (handler.features.FOLDER / str(spec.feature) / "fragment.html.j2").read_text(encoding="utf-8"),
        )
    ]


class Elements(HTMLParser):
    """Text of the elements carrying `data-section` or `data-field`, and every tag seen."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.texts: dict[str, list[str]] = {}
        self._open: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        for key in ("data-section", "data-field"):
            if attributes.get(key):
                self._open.append((tag, f"{key}={attributes[key]}"))
                self.texts.setdefault(f"{key}={attributes[key]}", []).append("")

    def handle_endtag(self, tag: str) -> None:
        if self._open and self._open[-1][0] == tag:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for _, key in self._open:
            self.texts[key][-1] += data


def parse(page: str) -> Elements:
    elements = Elements()
    elements.feed(page)
    return elements


def run_on(tmp_path: Path, gt: Any, pred: Any, **inputs: str) -> Findings:
    raw = {
        "GT_DATASET": str(write_json(tmp_path / "gt.json", gt)),
        "PRED_DATASET": str(write_json(tmp_path / "pred.json", pred)),
        **inputs,
    }
    result = run(parse_inputs(raw), LocalStore(tmp_path / "store"))
    PAGE_DATA[result.findings.report_id] = result.page
    return result.findings


# Each run's drawing data (the sketches), kept out of the findings, by report id: the page as the run drew it.
PAGE_DATA: dict[str, Mapping[str, object]] = {}


def render(findings: Findings) -> str:
    """The page of a run of this module, as the run rendered it (its sketches included)."""
    return render_html(findings, PAGE_DATA.get(findings.report_id))


def small_case() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    gt = [
        asset(
            QUOTED,
            [
                annotation((HOSTILE, 0, 0, 10, 10)),
                annotation(("car", 20, 20, 30, 30)),
                annotation(("car", 60, 60, 70, 70)),
            ],
        ),
        asset("b.jpg", [annotation(("dog", 0, 0, 100, 100), width=100)]),
    ]
    pred = [
        asset(
            QUOTED,
            [
                annotation(("car", 0, 0, 10, 10), 0.9),
                annotation(("car", 20, 20, 30, 35), 0.8),
                annotation(("car", 60, 60, 70, 62.5), 0.7),
                annotation(("car", 80, 80, 90, 90), 0.6),
            ],
        ),
        asset("b.jpg", [annotation(("dog", 0, 0, 100, 100), 0.3)]),
    ]
    return gt, pred


@pytest.fixture
def findings(tmp_path: Path) -> Findings:
    gt, pred = small_case()
    return run_on(tmp_path, gt, pred)


def test_findings_carry_the_new_sections(findings: Findings) -> None:
    validate_document(findings.document())
    assert "actions" not in findings.document()  # the counts under the actions' names (version 3)
    shown_actions = dict(
        re.findall(
            r'<tr data-action="(\w+)"><td>[^<]*</td><td class="num" data-field="count">(\d+)<',
            render(findings),
        )
    )
    assert shown_actions == {"accept": "0", "nudge": "1", "relabel": "1", "delete": "2", "draw": "2"}
    assert findings.document()["confusions"] == [{"gt_class": HOSTILE, "pred_class": "car", "count": 1}]
    assert [row["class"] for row in findings.document()["per_class"]] == ["car", "dog", HOSTILE]
    assert findings.near_misses.count == 1 and findings.near_misses.bands[1].count == 1
    assert findings.document()["images_with_most_work"][0]["asset_id"] == QUOTED
    assert findings.document()["by_size"]["available"] and len(findings.document()["by_size"]["sizes"]) == 3
    recommended = findings.document()["recommendation"]
    assert recommended["threshold"] == 0.0 and recommended["criterion"] == "labeler time saved"
    page = " ".join(render(findings).split())
    assert "0 saves the most time" in page and f"Recommended: {recommended['says']}." in page
    assert findings.headline() == f"{findings.verdict} Recommended: {recommended['says']}."
    assert findings.document()["time"]["costs_adjusted"] is False
    assert "Su, Deng, Fei-Fei" in findings.document()["time"]["cited"]["draw"]


def test_new_sections_are_folded_below_the_headline(findings: Findings) -> None:
    page = render(findings)
    elements = parse(page)
    details = [attrs for tag, attrs in elements.tags if tag == "details"]
    folds = [attrs["data-section"] for attrs in details if "data-section" in attrs]
    assert folds == [fold for fold in registered_folds() if fold in folds] and len(folds) >= 3
    assert all("open" not in attrs for attrs in details)
    assert page.index('class="cards"') < page.index('data-section="actions"')
    assert page.index("Dataset figures") < page.index('data-section="actions"')
    texts = elements.texts
    assert texts["data-field=sweep_advice"][0].startswith("0 saves the most time")
    assert [t for t in texts["data-field=class_label"]] == ["car", "dog", HOSTILE[:21] + "…"]  # cut to fit
    # a caption shows the id's tail, whole parts (no break inside a name); its title the whole id
    assert texts["data-field=asset_id"][0] == tail_of(QUOTED) == "\u2026<b>&amp; 0001.jpg"
    assert f'title="{escape(QUOTED)}"' in page
    figures = [
        attrs["data-figure"] for tag, attrs in elements.tags if tag == "svg" and "data-figure" in attrs
    ]
    # each topic once: the interval is on the gauge, the rest are figures, not folds as well (their
    # order is the registry's: test_section_registry.py)
    assert len(figures) == len(set(figures)) and {"recommendation", "time", "per_class", "sweep"} <= set(
        figures
    )
    assert page.count('data-field="gauge_interval"') == 1
    drawn = len(findings.images_with_most_work) + len(findings.suspected_gt_errors.listed)
    assert page.count('<svg class="sketch"') == drawn + len(findings.near_misses.listed) == 4


def test_dataset_text_in_the_new_sections_is_escaped(findings: Findings) -> None:
    page = render(findings)
    assert HOSTILE not in page and "<b>" not in page
    # per class (chart row and its <title>s), confusions, a suspected GT error, the sketches
    assert page.count("&lt;img src=x onerror=alert(1)&gt;") >= 6
    assert re.search(r"<title>[^<]*&lt;img src=x onerror=alert\(1\)&gt;", page)  # an SVG <title> too
    assert "street &#34;quoted&#34; &#39;id&#39; &lt;b&gt;&amp;amp; 0001.jpg" in page
    body = page.split("</head>")[1]
    assert "<script" not in page and "http" not in body and "url(" not in page
    fetching = [tag for tag, attrs in parse(page).tags if {"src", "href"} & set(attrs) or tag == "img"]
    assert fetching == []


def test_empty_report_shows_the_reason_without_sections_or_charts(tmp_path: Path) -> None:
    findings = run_on(tmp_path, [asset("a", [annotation(("car", 0, 0, 10, 10))])], [asset("b", [])])
    validate_document(findings.document())
    page = render(findings)
    assert "share no image assets" in page and "<svg" not in page and "data-section" not in page
    assert findings.recommendation.classes == () and findings.per_class == ()


def test_eighty_classes_stay_in_a_scrolling_table(tmp_path: Path) -> None:
    names = [f"class {i} " + "very-long-name" * (i % 3) for i in range(85)]
    gt = [asset(f"img{i}", [annotation((name, 0, 0, 10, 10))]) for i, name in enumerate(names)]
    pred = [asset(f"img{i}", [annotation((names[(i + i % 2) % 85], 0, 0, 10, 8), 0.9)]) for i in range(85)]
    findings = run_on(tmp_path, gt, pred)
    assert len(findings.document()["per_class"]) == 85 and len(findings.document()["confusions"]) == 10
    page = render(findings)
    per_class = page[
        page.index('data-section-figure="per_class"') : page.index('data-section-figure="sketches"')
    ]
    assert per_class.count("<g data-class-row>") == 85 and 'data-field="class_tail"' in per_class
    assert "overflow-wrap:anywhere" in page


def test_page_prints_the_headline_on_one_a4_page(findings: Findings) -> None:
    page = render(findings)
    assert "@page { size:A4" in page
    assert "details.fold > :not(summary)" in page.split("@media print")[1]


def test_sizes_are_left_out_for_normalised_boxes_without_image_sizes(tmp_path: Path) -> None:
    box = {"label": "car", "x_min": 0.1, "y_min": 0.1, "x_max": 0.5, "y_max": 0.5}
    gt = {"coordinates": "normalized", "assets": [{"asset_id": "a", "annotations": [box]}]}
    scored = {**box, "confidence": 1}
    pred = {"coordinates": "normalized", "assets": [{"asset_id": "a", "annotations": [scored]}]}
    findings = run_on(tmp_path, gt, pred)
    assert findings.document()["by_size"] == {"available": False, "note": findings.by_size.note, "sizes": []}
    assert findings.by_size.note is not None and "normalised" in findings.by_size.note
    assert parse(render(findings)).texts["data-field=size_note"] == [findings.by_size.note]


def test_sizes_of_normalised_boxes_with_image_sizes_are_in_pixels(tmp_path: Path) -> None:
    box = {"label": "car", "x_min": 0.0, "y_min": 0.0, "x_max": 0.5, "y_max": 0.5}
    document = {
        "coordinates": "normalized",
        "assets": [{"asset_id": "a", "width": 640, "height": 480, "annotations": [{**box, "confidence": 1}]}],
    }
    findings = run_on(tmp_path, document, document)
    assert [s.counts.total for s in findings.by_size.sizes] == [0, 0, 1]  # 320 x 240 is large


def test_schema_and_model_refuse_broken_new_sections(findings: Findings) -> None:
    good: dict[str, Any] = findings.document()
    assert Findings.model_validate(good) == findings
    broken = [
        {**good, "counts": {k: v for k, v in good["counts"].items() if k != "false_negative"}},
        {**good, "per_class": [{"class": "car"}]},
        {**good, "confidence_sweep": {**good["confidence_sweep"], "best_score": 1.5}},
        {k: v for k, v in good.items() if k != "near_misses"},
    ]
    for document in broken:
        with pytest.raises(ValueError, match="findings do not match"):
            validate_document(document)
        with pytest.raises(ValidationError):
            Findings.model_validate(document)


def test_time_costs_from_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gt, pred = small_case()
    args = [
        str(write_json(tmp_path / "gt.json", gt)),
        str(write_json(tmp_path / "pred.json", pred)),
        "--store",
        str(tmp_path / "store"),
        "--seconds-draw",
        "10",
        "--seconds-delete",
        "0",
    ]
    assert cli_main([*args, "--json"]) == 0
    time = json.loads(capsys.readouterr().out)["time"]
    assert time["costs_seconds"] == {"accept": 1.8, "nudge": 6.0, "relabel": 4.0, "delete": 0.0, "draw": 10.0}
    assert time["costs_adjusted"] and time["from_scratch_seconds"] == 4 * 10
    assert time["with_predictions_seconds"] == 6 + 4 + 0 + 2 * 10
    assert cli_main(args) == 0
    assert "labeler time: about 30 s with the predictions, 40 s from scratch" in capsys.readouterr().out
    with pytest.raises(SystemExit) as refused:  # an option error: argparse's one line, exit 2
        cli_main([*args, "--seconds-nudge", "-1"])
    assert refused.value.code == 2
    assert "--seconds-nudge" in capsys.readouterr().err


def test_time_costs_page_says_who_set_them(tmp_path: Path) -> None:
    gt, pred = small_case()
    raw = {
        "GT_DATASET": str(write_json(tmp_path / "gt.json", gt)),
        "PRED_DATASET": str(write_json(tmp_path / "pred.json", pred)),
    }
    result = run(parse_inputs(raw), LocalStore(tmp_path / "store"), costs=TimeCosts(draw=30))
    page = render_html(result.findings, result.page)
    assert "(set by the user)" in page
    assert starts(
        cost_row(page, "draw"), "30", "set by the user; the default: measured: Su, Deng, Fei-Fei (2012)"
    )
    default = render_html(run(parse_inputs(raw), LocalStore(tmp_path / "store")).findings)
    assert starts(cost_row(default, "draw"), "25.5", "measured: Su, Deng, Fei-Fei (2012)")
    assert starts(
        cost_row(default, "accept"), "1.8", "measured: Papadopoulos, Uijlings, Keller, Ferrari (2016)"
    )
    assert starts(cost_row(default, "nudge"), "6", "an assumption, no source we know (dragging one or two")
    assert (
        "verifying and drawing measured (Papadopoulos et al. 2016, Su et al. 2012), the others assumed"
        in default
    )


def starts(row: tuple[str, str], seconds: str, basis: str) -> bool:
    return row[0] == seconds and row[1].startswith(basis)


def cost_row(page: str, action: str) -> tuple[str, str]:
    """The seconds of `action` in the page's table of costs, and the start of its basis."""
    found = re.search(
        rf'<tr data-action="{action}"><td>{action}</td><td class="num" data-field="seconds">([^<]*)</td>'
        r'<td data-field="basis">([^<]*)</td>',
        page,
    )
    assert found, action
    seconds, basis = found.groups()
    return seconds, basis


def test_time_costs_in_the_python_api() -> None:
    boxes = [[0, 0, 10, 10], [50, 50, 60, 60]]
    predictions = [{"bboxes": boxes, "labels": ["cat", "cat"], "scores": [0.9, 0.9]}]
    groundtruths = [{"bboxes": [[0, 0, 10, 10], [20, 20, 30, 30]], "labels": ["cat", "dog"]}]
    metric = PrelabelingEfficiency(time_costs=TimeCosts(accept=1, delete=3, draw=20))
    result = metric(predictions=predictions, groundtruths=groundtruths)
    assert (result.time.with_predictions_seconds, result.time.from_scratch_seconds) == (1 + 3 + 20, 40)
    assert result.to_dict()["time"]["saved_seconds"] == 16
    default = PrelabelingEfficiency()(predictions=predictions, groundtruths=groundtruths)
    assert default.time.from_scratch_seconds == 2 * 25.5
    merged = metric.merge(PrelabelingEfficiency())
    assert merged.time_costs == metric.time_costs


def test_sweep_figure_stays_in_its_plot_and_marks_both_thresholds() -> None:
    points = [(t / 20, (t % 3) / 2, -3.0 if t == 0 else (t % 4) / 4) for t in range(20)]
    figure = sweep_figure(points, used=0.5, best=0.05)
    left, right, top, bottom = figure.plot
    for line in (figure.score, figure.saved):
        xy = [tuple(map(float, pair.split(","))) for pair in line.points.split()]
        assert len(xy) == 20
        assert all(left <= x <= right and top <= y <= bottom for x, y in xy)
    assert figure.y_floor == -1.0 and figure.clipped  # a time loss of 3x the scratch time is drawn at -1
    assert (figure.used.threshold, figure.best.threshold) == (0.5, 0.05)
    assert figure.best.x < figure.used.x and figure.used.y_score == bottom - (0.5 + 1) / 2 * (bottom - top)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0 s"),
        (45.4, "45 s"),
        (89, "89 s"),
        (90, "2 min"),
        (3000, "50 min"),
        (5369, "89 min"),
        (5399, "1 h 30 min"),
        (5400, "1 h 30 min"),
        (36_000, "10 h 00 min"),
        (-120, "\u22122 min"),
    ],
)
def test_duration(seconds: float, text: str) -> None:
    assert duration(seconds) == text


def test_a_one_image_one_box_run_reads_in_the_singular(tmp_path: Path) -> None:
    """Counts of one are said in the singular wherever the page counts (`counted`): no "1 images"."""
    gt = write_json(
        tmp_path / "gt.json", {"assets": [asset("only.jpg", [annotation(("car", 10, 10, 50, 50))])]}
    )
    missed = asset("only.jpg", [annotation(("car", 60, 60, 90, 90), 0.9)])
    pred = write_json(tmp_path / "pred.json", {"assets": [missed]})
    result = run(parse_inputs({"GT_DATASET": str(gt), "PRED_DATASET": str(pred)}), LocalStore(tmp_path / "s"))
    text = re.sub(r"<[^>]+>", " ", render_html(result.findings, result.page))
    assert "resampling the 1 image (" in text
    plurals = re.findall(
        r"\b1 (?:images|boxes|objects|pairs|classes|missed objects|ground-truth boxes)\b", text
    )
    assert plurals == []
