"""The report in a real browser: Debian's headless Chromium, driven by Playwright, on reports from real runs.

Needs `/usr/bin/chromium` (`.ci/install-chromium`) and the `playwright` package (its driver only: no
`playwright install`, no browser download). Without them the tests skip, except under CI (`CI=true`), where
they fail and say why. Screenshots go to `$PRELABEL_ARTIFACTS` (default `artifacts/screenshots/`).
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest
from helpers.browser_reports import BUILDERS, HOSTILE_CLASS, QUOTED_ASSET, StoredReport
from helpers.builders import annotation, asset, write_json
from helpers.needs import missing
from helpers.paths import ROOT
from helpers.reports import strings_in

from handler.comparison import compare
from handler.report.findings import Comparison
from handler.report.findings.compare_findings import compare_verdict
from handler.report.page.compare_page import render_compare_html
from handler.sections.wording import duration, image_duration, saving, tail_of

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Dialog, Frame, Page, Request

CHROMIUM: Final = Path("/usr/bin/chromium")
CHROMIUM_ARGS: Final = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORTS: Final = [(900, 700), (1400, 900)]  # the platform's preview iframe, a full browser tab
OUTCOMES: Final = ("correct", "shifted", "class_confused", "false_positive", "false_negative")
# Everything the overflow rule covers: the cards, the folded blocks, and any section, with all they hold.
OVERFLOW_SCOPE: Final = (
    ".card, .card *, details, details *, section, section *, footer, footer *, .warning, .warning *"
)


def artifacts_dir() -> Path:
    folder = Path(os.environ.get("PRELABEL_ARTIFACTS") or ROOT / "artifacts" / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        missing(f"{CHROMIUM} is missing: run .ci/install-chromium (Debian's chromium package)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as error:
        missing(f"the playwright package is missing ({error}): pip install '.[test]'")
    # Playwright gives every launch a fresh temporary user data dir and deletes it on close.
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def reports(browser_reports: dict[str, StoredReport]) -> dict[str, StoredReport]:
    return browser_reports


@dataclass
class Observed:
    """What a page did while it was open, and what it showed."""

    url: str
    console: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    shown: dict[str, Any] = field(default_factory=dict)
    overflow_folded: dict[str, Any] = field(default_factory=dict)
    overflow_unfolded: dict[str, Any] = field(default_factory=dict)


SHOWN_JS: Final = """() => {
  const text = (el) => (el === null ? null : el.textContent.replace(/\\s+/g, ' ').trim());
  const shares = {};
  for (const card of document.querySelectorAll('.card[data-outcome]')) {
    shares[card.dataset.outcome] = text(card.querySelector('[data-field=share]'));
  }
  const handlers = [...document.querySelectorAll('*')].flatMap((el) =>
    [...el.attributes].filter((a) => a.name.startsWith('on')).map((a) => el.tagName + '@' + a.name));
  return {
    grade: text(document.querySelector('[data-field=efficiency_level]')),
    score: text(document.querySelector('[data-field=assistance_score]')),
    verdict: text(document.querySelector('[data-field=verdict]')),
    shares,
    captions: Object.fromEntries([...document.querySelectorAll('.card')].map((card) =>
      [card.dataset.outcome, text(card.querySelector('[data-field=caption]'))])),
    footer: (() => {
      const box = document.querySelector('footer').getBoundingClientRect();
      return {left: box.left, right: box.right, width: window.innerWidth};
    })(),
    svgs: document.querySelectorAll('svg').length,
    cards: document.querySelectorAll('.card').length,
    imgs: document.querySelectorAll('img').length,
    scripts: document.querySelectorAll('script').length,
    handlers,
    text: document.body.textContent,
    folds: [...document.querySelectorAll('details[data-section]')].map((d) => d.dataset.section),
    recommendation: [...document.querySelectorAll('[data-saving-bar]')]
      .filter((r) => r.getBBox().width).length,
    draw_decisions: [...document.querySelectorAll('[data-field=decision]')]
      .filter((r) => text(r) === 'draw').length,
    suspects: [...document.querySelectorAll('[data-sketch=suspect]')].filter((r) => r.offsetParent).length,
    warnings: [...document.querySelectorAll('[data-warning]')].map((el) => ({
      code: el.dataset.warning, text: text(el), bottom: el.getBoundingClientRect().bottom,
    })),
    headTop: document.querySelector('.head').getBoundingClientRect().top,
    // The page from the verdict down to the gauge, as its top-level blocks.
    order: [...document.body.children].map((el) =>
      el.dataset.warning ? 'warning' : el.dataset.field || el.className || el.tagName.toLowerCase()),
  };
}"""

OVERFLOW_JS: Final = """(scope) => {
  const name = (el) => {
    let s = el.tagName.toLowerCase();
    if (el.id) s += '#' + el.id;
    if (el.classList.length) s += '.' + [...el.classList].join('.');
    for (const key of ['outcome', 'field']) {
      if (el.dataset && el.dataset[key]) s += `[data-${key}=${el.dataset[key]}]`;
    }
    return s;
  };
  const path = (el) => {
    const parts = [];
    for (let e = el; e && e !== document.body; e = e.parentElement) parts.unshift(name(e));
    return parts.join(' > ');
  };
  const wide = [];
  for (const el of document.querySelectorAll(scope)) {
    if (el.scrollWidth > el.clientWidth + 1) {
      const snippet = el.textContent.replace(/\\s+/g, ' ').trim().slice(0, 60);
      wide.push(`${path(el)}: scrollWidth ${el.scrollWidth} > clientWidth ${el.clientWidth} ("${snippet}")`);
    }
  }
  return {wide, document: document.documentElement.scrollWidth, viewport: window.innerWidth};
}"""


def _open(browser: Browser, report: StoredReport, width: int, height: int) -> Observed:
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        observed = Observed(report.html.resolve().as_uri())

        def on_console(message: ConsoleMessage) -> None:
            if message.type in {"error", "warning"}:
                observed.console.append(f"{message.type}: {message.text} ({message.location})")

        def on_request(request: Request) -> None:
            observed.requests.append(request.url)

        def on_dialog(dialog: Dialog) -> None:
            observed.dialogs.append(f"{dialog.type}: {dialog.message}")
            dialog.dismiss()

        page.on("console", on_console)
        page.on("pageerror", lambda error: observed.page_errors.append(str(error)))
        page.on("request", on_request)
        page.on("dialog", on_dialog)
        page.goto(observed.url, wait_until="networkidle")
        stem = f"{report.name}-{width}x{height}"
        page.screenshot(path=str(artifacts_dir() / f"{stem}.png"))  # what the reader sees first
        observed.overflow_folded = page.evaluate(OVERFLOW_JS, OVERFLOW_SCOPE)
        _unfold(page)
        observed.overflow_unfolded = page.evaluate(OVERFLOW_JS, OVERFLOW_SCOPE)
        observed.shown = page.evaluate(SHOWN_JS)
        if (width, height) == VIEWPORTS[0]:  # the whole page unfolded where a layout breaks first
            page.screenshot(path=str(artifacts_dir() / f"{stem}-unfolded.png"), full_page=True)
        page.wait_for_timeout(50)  # let a late console message or dialog arrive before the page closes
        return observed
    finally:
        context.close()


def _unfold(page: Page | Frame) -> None:
    """Open every folded block, as a reader clicking each summary would (all at once: a click each
    waits for the page to settle, a second apiece)."""
    page.evaluate("() => document.querySelectorAll('details').forEach((block) => { block.open = true; })")


@pytest.fixture(
    scope="module",
    params=[
        pytest.param((name, width, height), id=f"{name}-{width}x{height}")
        for name in BUILDERS
        for width, height in VIEWPORTS
    ],
)
def observed(request: pytest.FixtureRequest, browser: Browser, reports: dict[str, StoredReport]) -> Observed:
    name, width, height = request.param
    return _open(browser, reports[name], width, height)


def _report(observed: Observed, reports: dict[str, StoredReport]) -> StoredReport:
    return next(r for r in reports.values() if r.html.resolve().as_uri() == observed.url)


def test_no_console_error_no_page_error_no_dialog(observed: Observed) -> None:
    assert observed.console == []
    assert observed.page_errors == []
    assert observed.dialogs == []


def test_nothing_is_fetched_but_the_page(observed: Observed) -> None:
    assert observed.requests, "the page's own request was not seen: the request listener is broken"
    assert [url for url in observed.requests if url != observed.url] == []
    assert observed.shown["scripts"] == 0


def _recommended(recommendation: dict[str, Any]) -> str:
    """The recommendation as the verdict says it: how to read the files as a sentence of its own
    when they look misread, else after `Recommended:`."""
    says = recommendation["says"]
    return f"{says[0].upper()}{says[1:]}." if recommendation["misread"] else f"Recommended: {says}."


def test_grade_score_shares_and_verdict_equal_the_findings(
    observed: Observed, reports: dict[str, StoredReport]
) -> None:
    findings, shown = _report(observed, reports).findings, observed.shown
    assert shown["grade"] == findings["efficiency_level"]
    said = findings["verdict"]
    if findings["reason"] is None:  # with the recommendation: first when it says how to read the files
        recommended = _recommended(findings["recommendation"])
        said = f"{recommended} {said}" if findings["recommendation"]["misread"] else f"{said} {recommended}"
    assert shown["verdict"] == " ".join(said.split())
    if findings["reason"] is None:
        assert shown["score"] == f"{findings['assistance_score']:.2f}"
        assert {key: shown["shares"].get(key) for key in OUTCOMES} == {
            key: f"{findings['counts'][key] / (findings['counts']['total'] or 1):.1%}" for key in OUTCOMES
        }
    else:  # nothing scored: the verdict says why, and no empty gauge or cards are drawn
        assert findings["reason"] in shown["verdict"]
        assert shown["svgs"] == 0 and shown["cards"] == 0, "an empty chart is shown"


def test_each_card_says_what_it_counts_with_the_thresholds(
    observed: Observed, reports: dict[str, StoredReport]
) -> None:
    findings, captions = _report(observed, reports).findings, observed.shown["captions"]
    if findings["reason"] is not None:
        assert captions == {}
        return
    low, high = f"{findings['parameters']['iou_min']:g}", f"{findings['parameters']['iou_perfect']:g}"
    assert captions["correct"] == f"same class, IoU ≥ {high}"
    assert captions["shifted"] == f"same class, {low} ≤ IoU < {high}"
    assert captions["class_confused"] == f"other class, IoU ≥ {low}"
    assert all(captions[key] for key in (*OUTCOMES, "mean_iou")), captions


def test_the_footer_fits_the_viewport(observed: Observed) -> None:
    footer = observed.shown["footer"]
    assert footer["left"] >= 0 and footer["right"] <= footer["width"], footer


def test_the_recommendation_and_suspected_gt_errors_equal_the_findings(
    observed: Observed, reports: dict[str, StoredReport]
) -> None:
    findings, shown = _report(observed, reports).findings, observed.shown
    if findings["reason"] is not None:
        assert shown["recommendation"] == 0 and shown["suspects"] == 0
        return
    recommended, suspected = findings["recommendation"], findings["suspected_gt_errors"]
    # given, the best single threshold, recommended: a bar each, unless it says another's time again
    times = {saving(s) for s in (findings["time"]["saved_seconds"], recommended["seconds_saved"])}
    single = saving(recommended["threshold_seconds_saved"]) not in times
    if recommended["kept"] is not None:  # the given, kept: the sweep's best beside it if it differs
        assert shown["recommendation"] == 1 + single
    else:
        assert shown["recommendation"] == (1 if len(times) == 1 else 2 + single)
    assert _recommended(recommended) in shown["verdict"]
    shown_classes = {row["class"] for row in findings["per_class"]}
    drawn = sum(row["action"] == "draw" for row in recommended["classes"] if row["class"] in shown_classes)
    assert shown["draw_decisions"] == drawn
    assert shown["suspects"] == len(suspected["listed"])


@pytest.mark.parametrize("state", ["folded", "unfolded"])
def test_nothing_overflows_horizontally(observed: Observed, state: str) -> None:
    measured = observed.overflow_folded if state == "folded" else observed.overflow_unfolded
    assert measured["wide"] == [], "\n".join(measured["wide"])
    assert measured["document"] <= measured["viewport"], "the page scrolls horizontally"


def test_dataset_text_renders_as_text(observed: Observed, reports: dict[str, StoredReport]) -> None:
    report, shown = _report(observed, reports), observed.shown
    assert shown["imgs"] == 0 and shown["handlers"] == [] and observed.dialogs == []
    if report.name != "hostile":
        return
    assert HOSTILE_CLASS in shown["text"]
    # Whatever the findings say about this asset or class must reach the reader literally.
    for literal in (HOSTILE_CLASS, QUOTED_ASSET):
        if any(literal in text for text in strings_in(report.findings)):
            assert literal in shown["text"], f"{literal!r} is in the findings but not on the page as text"


def test_warnings_stand_under_the_verdict_above_the_gauge(
    observed: Observed, reports: dict[str, StoredReport]
) -> None:
    report, shown = _report(observed, reports), observed.shown
    report_id = report.findings["report_id"]

    def as_shown(message: str) -> str:  # code marks become code, the placeholder the page's own id
        return " ".join(message.replace("`", "").replace("REPORT_ID", report_id).split())

    expected = [
        (w["code"], f"{w['severity']}: {as_shown(w['message'])}") for w in report.findings["warnings"]
    ]
    assert [(w["code"], w["text"]) for w in shown["warnings"]] == expected
    verdict = shown["order"].index("verdict")
    assert shown["order"][verdict + 1 : verdict + 2 + len(expected)] == ["warning"] * len(expected) + ["head"]
    assert all(w["bottom"] <= shown["headTop"] for w in shown["warnings"])
    if report.name == "hostile":  # the threshold input is markup: the banner shows it as text
        assert any(HOSTILE_CLASS in w["text"] for w in shown["warnings"])


@pytest.mark.parametrize("name", list(BUILDERS))
def test_works_without_javascript(browser: Browser, reports: dict[str, StoredReport], name: str) -> None:
    report = reports[name]
    context = browser.new_context(viewport={"width": 900, "height": 700}, java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(report.html.resolve().as_uri(), wait_until="load")
        grade = page.locator("[data-field=efficiency_level]")
        assert grade.is_visible()
        assert grade.text_content() == report.findings["efficiency_level"]
        if report.findings["reason"] is None:
            assert page.locator("[data-field=assistance_score]").text_content() == (
                f"{report.findings['assistance_score']:.2f}"
            )
            for key in OUTCOMES:
                assert page.locator(f".card[data-outcome={key}] [data-field=share]").is_visible()
    finally:
        context.close()


def test_findings_of_the_reports_are_what_the_tests_expect(reports: dict[str, StoredReport]) -> None:
    """The fixtures cover what they claim to: a strong, a weak, an empty and a many-classes report."""
    levels = {name: report.findings["efficiency_level"] for name, report in reports.items()}
    assert levels["strong"] in {"Production-grade", "Strong assist"}, levels
    assert levels["weak"] == "Minimal assist", levels
    assert reports["empty"].findings["reason"] is not None
    assert reports["many-classes"].findings["dataset"]["classes"] >= 80
    assert json.dumps(reports["hostile"].findings).count("onerror") > 0


def _section_text(browser: Browser, report: StoredReport, section: str) -> tuple[str, str, bool]:
    """A folded section's one-line summary and, once opened by a click, its whole text and visibility."""
    context = browser.new_context(viewport={"width": 900, "height": 700})
    try:
        page = context.new_page()
        page.goto(report.html.resolve().as_uri(), wait_until="load")
        block = page.locator(f"details[data-section={section}]")
        summary = " ".join((block.locator("summary").text_content() or "").split())
        block.locator("summary").click()
        body = " ".join(block.inner_text().split())
        return summary, body, block.locator("table").first.is_visible()
    finally:
        context.close()


@pytest.mark.parametrize("name", ["strong", "weak", "many-classes"])
def test_the_gauge_shows_the_findings_interval_and_the_grade_shares(
    browser: Browser, reports: dict[str, StoredReport], name: str
) -> None:
    context = browser.new_context(viewport={"width": 900, "height": 700})
    try:
        page = context.new_page()
        page.goto(reports[name].html.resolve().as_uri(), wait_until="load")
        text = " ".join(page.locator(".head").inner_text().split())
        arc = page.locator("[data-field=gauge_interval]").bounding_box()
    finally:
        context.close()
    assert arc is not None and arc["width"] > 0  # drawn on the gauge
    u = reports[name].findings["uncertainty"]
    assert f"between {u['score_low']:.2f} and {u['score_high']:.2f}, 19 times in 20" in text
    reached = [g for g in u["grade_probabilities"] if g["share"] > 0]
    if len(reached) > 1:
        assert all(f"{g['grade']} in {g['share'] * 100:.0f}%" in text for g in reached)


@pytest.mark.parametrize("name", ["strong", "hostile"])
def test_slices_section_shows_every_slice(
    browser: Browser, reports: dict[str, StoredReport], name: str
) -> None:
    rows = reports[name].findings["slices"]
    assert rows, "the report has no slices: the fixture lost its asset tags"
    worst = min(rows, key=lambda row: row["assistance_score"])
    summary, body, visible = _section_text(browser, reports[name], "slices")
    lowest = f"{worst['name']} ({worst['assistance_score']:.2f}, {worst['grade']})"
    assert f"{len(rows)} {'slice' if len(rows) == 1 else 'slices'}; lowest: {lowest}" in summary
    assert visible
    for row in rows:
        assert f"{row['name']}" in body and f"{row['assistance_score']:.2f}" in body
    assert [w["code"] for w in reports["warned"].findings["warnings"]] == [
        "other_reading",
        "ground_truth_has_confidences",
    ]


# The comparison page (`prelabel-eval compare --html`): same CSS, same escaping, same browser.
def _hostile_comparison(work: Path) -> tuple[Comparison, Path]:
    """A and B on a GT whose class name is markup and whose asset id carries quotes and `<`."""
    hostile, car = (HOSTILE_CLASS, 10, 10, 50, 50), ("car", 60, 10, 95, 40)
    hostile_b, car_b = (HOSTILE_CLASS, 50, 50, 90, 90), ("car", 10, 10, 40, 40)
    gt = [
        asset(QUOTED_ASSET, [annotation(hostile), annotation(car)]),
        asset("plain.jpg", [annotation(car_b), annotation(hostile_b)]),
    ]
    pred_a = [asset(QUOTED_ASSET, [annotation(hostile, 0.9)]), asset("plain.jpg", [annotation(car_b, 0.95)])]
    pred_b = [
        asset(QUOTED_ASSET, [annotation(hostile, 0.9), annotation(car, 0.8)]),
        asset("plain.jpg", [annotation(car_b, 0.95), annotation(hostile_b, 0.7)]),
    ]
    found = compare(
        str(write_json(work / "gt.json", gt)),
        str(write_json(work / "a.json", pred_a)),
        str(write_json(work / "b <i>.json", pred_b)),
    )
    page = work / "compare.html"
    page.write_text(render_compare_html(found), encoding="utf-8")
    return found, page


@pytest.mark.parametrize("viewport", [(900, 700), (1400, 900)])
def test_the_comparison_page_shows_the_comparison_safely(
    browser: Browser, tmp_path: Path, viewport: tuple[int, int]
) -> None:
    found, page_file = _hostile_comparison(tmp_path)
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    try:
        page = context.new_page()
        problems: list[str] = []
        requests: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type in {"error", "warning"} else None)
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.on("dialog", lambda dialog: (problems.append(dialog.message), dialog.dismiss()))
        page.on("request", lambda request: requests.append(request.url))
        page.goto(page_file.resolve().as_uri(), wait_until="networkidle")
        for summary in page.locator("details > summary").all():
            summary.click()
        text = page.locator("body").text_content() or ""
        assert HOSTILE_CLASS in text and "b <i>.json" in text
        assert page.locator("img, script, i").count() == 0
        # the verdict says which set and by how much, once: no card repeats it
        verdict = page.locator("[data-field=verdict]").text_content() or ""
        assert verdict == compare_verdict(found) and f"Prediction set {found.better} leaves less" in verdict
        assert page.locator("[data-field=better], [data-field=difference]").count() == 0
        for figure in ("difference", "compare_classes", "transitions"):
            assert page.locator(f"svg[data-figure={figure}]").count() == 1
        # B found the two boxes A missed: the grid's cells are the transitions' counts, row by row
        cells = page.locator("svg[data-figure=transitions] [data-transition] text").all_text_contents()
        assert [int(count) for count in cells] == [n for row in found.transitions.counts for n in row]
        assert found.transitions.counts[3][0] == 2 and found.transitions.better == 2
        svg_text = page.locator("svg[data-figure=compare_classes]").inner_html()
        assert "&lt;img src=x onerror=alert(1)&gt;" in svg_text  # the class name, escaped in the chart
        whiskers = page.locator("svg[data-figure=compare_classes] [data-field=class_interval]")
        assert whiskers.count() == len(found.per_class)  # each class's interval of B - A, drawn
        ends = [
            (float(w.get_attribute("data-low") or "nan"), float(w.get_attribute("data-high") or "nan"))
            for w in whiskers.all()
        ]
        assert ends == [pytest.approx((row.low, row.high), abs=1e-4) for row in found.per_class]
        assert page.locator("[data-field=class]").count() == len(found.per_class) == 2
        measured = page.evaluate(OVERFLOW_JS, OVERFLOW_SCOPE)
        assert measured["wide"] == [] and measured["document"] <= measured["viewport"], measured
        page.wait_for_timeout(50)
        assert problems == []
        assert requests == [page_file.resolve().as_uri()]
    finally:
        context.close()


# The page as the platform shows it: inside a sandboxed iframe (no scripts, an opaque origin).
FIGURES: Final = ("recommendation", "time", "per_class", "sweep")
FRAME_JS: Final = """() => {
  const text = (el) => el.textContent;
  return {
    width: document.documentElement.scrollWidth,
    viewport: window.innerWidth,
    figures: [...document.querySelectorAll('svg[data-figure]')].map((el) => el.dataset.figure),
    sketches: document.querySelectorAll('svg.sketch').length,
    svgText: [...document.querySelectorAll('svg text, svg title')].map(text).join('\\n'),
    captions: [...document.querySelectorAll('.sketches figcaption [data-field=asset_id]')]
      .map((el) => el.title),
    imgs: document.querySelectorAll('img, script, iframe').length,
  };
}"""


def _framed(report: StoredReport, work: Path) -> Path:
    """A host page holding the report in `<iframe sandbox>`, by `srcdoc` (the page itself, escaped)."""
    from html import escape

    page = report.html.read_text(encoding="utf-8")
    host = work / f"{report.name}-host.html"
    host.write_text(
        "<!DOCTYPE html><html><body style='margin:0'>"
        f"<iframe sandbox srcdoc=\"{escape(page, quote=True)}\" style='border:0;width:100vw;height:100vh'>"
        "</iframe></body></html>",
        encoding="utf-8",
    )
    return host


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=[f"{w}x{h}" for w, h in VIEWPORTS])
@pytest.mark.parametrize("name", list(BUILDERS))
def test_the_page_in_a_sandboxed_iframe(
    browser: Browser, reports: dict[str, StoredReport], tmp_path: Path, name: str, viewport: tuple[int, int]
) -> None:
    report = reports[name]
    host = _framed(report, tmp_path)
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    try:
        page = context.new_page()
        problems: list[str] = []
        requests: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type in {"error", "warning"} else None)
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.on("request", lambda request: requests.append(request.url))
        page.goto(host.resolve().as_uri(), wait_until="networkidle")
        frame = page.frames[1]
        _unfold(frame)
        shown = frame.evaluate(FRAME_JS)
        page.screenshot(path=str(artifacts_dir() / f"{name}-{viewport[0]}x{viewport[1]}-iframe.png"))
        page.wait_for_timeout(50)
    finally:
        context.close()
    assert problems == [] and requests == [host.resolve().as_uri()]
    assert shown["width"] <= shown["viewport"], "the page scrolls horizontally inside the frame"
    assert shown["imgs"] == 0
    findings = report.findings
    if findings["reason"] is not None:
        assert shown["figures"] == [] and shown["sketches"] == 0
        return
    # a folded tail of classes is a second per-class chart
    assert list(dict.fromkeys(f for f in shown["figures"] if f in FIGURES)) == list(FIGURES)
    listed = len(findings["images_with_most_work"]) + len(findings["suspected_gt_errors"]["listed"])
    assert shown["sketches"] == listed + len(findings["near_misses"]["listed"])
    if name == "hostile":  # dataset text in SVG <text>/<title> and under the sketches is text, not markup
        assert HOSTILE_CLASS in shown["svgText"]
        assert QUOTED_ASSET in shown["captions"]


PICTURED_JS: Final = """() => [...document.querySelectorAll('svg.sketch.pictured')].map((svg) => {
  const image = svg.querySelector('image');
  const frame = svg.getBoundingClientRect(), box = image.getBoundingClientRect();
  return {
    href: image.getAttribute('href').slice(0, 23),
    frame: [frame.width, frame.height],
    image: [box.width, box.height],
  };
})"""


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=[f"{w}x{h}" for w, h in VIEWPORTS])
def test_the_sketches_carry_their_images_drawn_under_the_boxes(
    browser: Browser, reports: dict[str, StoredReport], viewport: tuple[int, int]
) -> None:
    """many-classes has its images: each sketch shows its picture, filling its frame, from the page itself."""
    report = reports["many-classes"]
    assert report.findings["pictures"]["drawn"] == len(report.findings["sketches"]) > 0
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    try:
        page = context.new_page()
        page.goto(report.html.resolve().as_uri(), wait_until="networkidle")
        pictured = page.evaluate(PICTURED_JS)
        first = page.locator("svg.sketch.pictured").first
        first.scroll_into_view_if_needed()
        shot = first.screenshot()
    finally:
        context.close()
    assert len(pictured) == len(re.findall(r'<svg class="sketch', report.html.read_text(encoding="utf-8")))
    for shown in pictured:
        assert shown["href"] == "data:image/jpeg;base64,"
        assert shown["image"] == pytest.approx(shown["frame"], abs=1.5) and shown["frame"][0] > 50
    # Drawn: the sketch's pixels are the picture's (sky, ground, objects), not the bare grey frame.
    from PIL import Image

    colours = Image.open(io.BytesIO(shot)).convert("RGB").getcolors(1 << 16) or []
    frame = (0xF4, 0xF6, 0xF9)  # svg.sketch's background
    bare = sum(
        count for count, rgb in colours if max(abs(c - f) for c, f in zip(rgb, frame, strict=True)) < 8
    )
    assert bare < 0.2 * sum(count for count, _ in colours) and len(colours) > 200


QUEUE_JS: Final = """() => {
  const text = (el) => el.textContent.replace(/\\s+/g, ' ').trim();
  const table = document.querySelector('table[data-table=review_queue]');
  return {
    visible: table !== null && table.offsetParent !== null,
    rows: [...table.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map(text)),
    note: text(document.querySelector('[data-field=queue_note]')),
    sketched: [...document.querySelectorAll('figure[data-sketch=work] figcaption')].map(
      (el) => el.innerText.replace(/\\s+/g, ' ').trim()),  // innerText: the <br> is a break
    uncertainBoxes: document.querySelectorAll('svg.sketch rect.pred.uncertain').length,
  };
}"""


@pytest.mark.parametrize("name", ["strong", "hostile"])
def test_the_review_queue_table_is_the_queue_s_first_rows_as_the_sketches_show_them(
    browser: Browser, reports: dict[str, StoredReport], name: str
) -> None:
    """One story: the table's rows are images_with_most_work (the queue's first rows) in rank order,
    the sketches show the same images in the same order with the same seconds, and the note says
    what the figures count; dataset text stays text."""
    findings = reports[name].findings
    queue, listed = findings["review_queue"], findings["images_with_most_work"]
    context = browser.new_context(viewport={"width": 900, "height": 700})
    try:
        page = context.new_page()
        page.goto(reports[name].html.resolve().as_uri(), wait_until="load")
        page.locator("details[data-section=work] > summary").click()
        shown = page.evaluate(QUEUE_JS)
    finally:
        context.close()
    assert shown["visible"] and len(shown["rows"]) == len(listed) > 0
    assert [row[:4] for row in shown["rows"]] == [
        [str(w["rank"]), w["asset_id"], image_duration(w["labeler_seconds"]), str(w["uncertain_boxes"])]
        for w in listed
    ]
    assert [int(row[0]) for row in shown["rows"]] == list(range(1, len(listed) + 1))
    for caption, w in zip(shown["sketched"], listed, strict=True):
        assert caption.startswith(
            f"#{w['rank']} {tail_of(w['asset_id'])} {image_duration(w['labeler_seconds'])}"
        )
    note = shown["note"]
    with_predictions = duration(findings["time"]["with_predictions_seconds"])
    assert f"of the {with_predictions} the labelers need with the predictions" in note
    assert (
        f"prelabel-eval show {findings['report_id']} --queue (review_queue.csv, {queue['images']} images)"
        in note
    )
    flagged = sum(box["uncertain"] for sketch in findings["sketches"] for box in sketch["boxes"])
    assert shown["uncertainBoxes"] == flagged
    if name == "hostile":
        assert QUOTED_ASSET in [row[1] for row in shown["rows"]]
