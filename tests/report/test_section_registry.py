"""A findings section is one module (models, builder, fragment) plus one typed field on `Findings`."""

from __future__ import annotations

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
from handler.report.findings.sections import SectionSpec, fragments
from handler.storage.local import LocalStore


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


class FindingsWithBusiest(Findings):
    busiest: Annotated[Busiest, SectionSpec(busiest, "busiest")]  # the one registration line


def test_the_fragments_follow_the_field_order() -> None:
    assert fragments(Findings) == [
        f"sections/{name}.html.j2"
        for name in (
            "actions",
            "per_class",
            "work",
            "near_misses",
            "time",
            "uncertainty",
            "slices",
            "routing",
            "gt_errors",
        )
    ]
    assert fragments(FindingsWithBusiest)[-1] == "sections/busiest.html.j2"


def test_a_registered_section_reaches_the_findings_and_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    templates = tmp_path / "report_templates"
    shutil.copytree(handler.report.page.html.resource_path("report_templates"), templates)
    (templates / "sections" / "busiest.html.j2").write_text(FRAGMENT, encoding="utf-8")
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
    assert page.index('data-section="gt_errors"') < page.index('data-section="busiest"')
