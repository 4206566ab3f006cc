"""A findings section is one module (models, builder, fragment) plus one typed field on `Findings`."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Annotated

import orjson
import pytest
from helpers.paths import EXAMPLES

import handler.report.findings.build
import handler.report.page.html
from handler.engine.analyses.per_class import PER_CLASS
from handler.inputs import parse_inputs
from handler.pipeline import run
from handler.report.findings.context import RunFacts
from handler.report.findings.fields import Count, Section
from handler.report.findings.model import Findings
from handler.report.findings.sections import Figure, SectionSpec, fragments
from handler.report.page import render_html
from handler.resources import resource_path
from handler.storage.local import LocalStore

TEMPLATES = resource_path("report_templates")


class Busiest(Section):
    """A tiny section: the scored images and the class with the most boxes."""

    images: Count
    top_class: str


def busiest(facts: RunFacts) -> Busiest:
    classes = facts.state.of(PER_CLASS)
    top = int(classes.counts.sum(axis=1).argmax())
    return Busiest(images=facts.state.figures.images, top_class=classes.names[top])


FRAGMENT = (
    '<details class="fold" data-section="busiest"><summary>Busiest: {{ f.busiest.top_class }}</summary>'
    "</details>\n"
)


# Its figure: a template under report_templates/figures/, and what it draws from the findings.
FIGURE = '<section class="figure-block" data-section-figure="busiest">{{ busiest_bar }}</section>\n'


def busiest_figure(findings: FindingsWithBusiest) -> dict[str, object]:
    return {"busiest_bar": "#" * findings.busiest.images}


class FindingsWithBusiest(Findings):
    # the one registration line
    busiest: Annotated[Busiest, SectionSpec(busiest, "busiest", Figure("busiest", busiest_figure, place=25))]


def _shown_as(template: str) -> str:
    """The `data-section` a fragment file marks its fold with."""
    found = re.search(r'data-section="(\w+)"', (TEMPLATES / template).read_text(encoding="utf-8"))
    assert found, f"{template} marks no fold with data-section"
    return found[1]


def test_the_page_folds_every_registered_fragment_once_in_field_order(tmp_path: Path) -> None:
    """What the page shows, not a list restated: each registered section's fold, in field order."""
    inputs = parse_inputs(
        {"GT_DATASET": str(EXAMPLES / "gt.json"), "PRED_DATASET": str(EXAMPLES / "predictions.jsonl")}
    )
    busiest_image = run(inputs, LocalStore(tmp_path)).findings.images_with_most_work[0].asset_id
    page = render_html(run(inputs, LocalStore(tmp_path), slices={"busiest": [busiest_image]}).findings)
    folds = re.findall(r'<details class="fold" data-section="(\w+)"', page)
    assert folds == [_shown_as(template) for template in fragments(Findings)]
    assert len(folds) == len(set(folds)) >= 3
    assert fragments(FindingsWithBusiest)[-1] == "sections/busiest.html.j2"


def test_a_registered_section_reaches_the_findings_and_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    templates = tmp_path / "report_templates"
    shutil.copytree(handler.report.page.html.resource_path("report_templates"), templates)
    (templates / "sections" / "busiest.html.j2").write_text(FRAGMENT, encoding="utf-8")
    (templates / "figures" / "busiest.html.j2").write_text(FIGURE, encoding="utf-8")
    monkeypatch.setattr(handler.report.page.html, "resource_path", lambda relative: tmp_path / relative)
    monkeypatch.setattr(handler.report.findings.build, "Findings", FindingsWithBusiest)

    inputs = parse_inputs(
        {"GT_DATASET": str(EXAMPLES / "gt.json"), "PRED_DATASET": str(EXAMPLES / "predictions.jsonl")}
    )
    result = run(inputs, LocalStore(tmp_path / "store"))

    document = result.findings.document()
    assert list(document)[-1] == "busiest"
    assert document["busiest"] == {"images": 24, "top_class": "person"}
    stored = next((tmp_path / "store" / "reports").glob("*/findings.json"))
    assert orjson.loads(stored.read_bytes())["busiest"] == document["busiest"]
    page = next((tmp_path / "store" / "reports").glob("*/report.html")).read_text(encoding="utf-8")
    assert '<details class="fold" data-section="busiest"><summary>Busiest: person</summary>' in page
    assert page.index('data-section="time"') < page.index('data-section="busiest"')
    # The figure stands at its place among the page's figures (after the per-class one, before the sketches).
    figures = re.findall(r'data-section-figure="(\w+)"', page)
    assert figures == ["interval", "recommendation", "time", "per_class", "busiest", "sketches", "sweep"]
    assert f'data-section-figure="busiest">{"#" * 24}</section>' in page
