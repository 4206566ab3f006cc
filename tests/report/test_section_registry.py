"""A feature's section (its model, its builder, its figure's values) and fragment, registered by one
typed field on `Findings`: the page shows the features in the fields' order, each once."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import orjson
import pytest
from helpers.features import add_fragment
from helpers.paths import EXAMPLES

import handler.features
import handler.report.findings.build
import handler.report.page.html
from handler.engine.analyses.box_counts import BOX_COUNTS
from handler.engine.analyses.per_class import PER_CLASS
from handler.inputs import parse_inputs
from handler.pipeline import run
from handler.report.findings.model import Findings
from handler.sections.context import RunFacts
from handler.sections.fields import Count, Section
from handler.sections.shown import Shown, features
from handler.storage.local import LocalStore


class Busiest(Section):
    """A tiny section: the scored images and the class with the most boxes."""

    images: Count
    top_class: str


def busiest(facts: RunFacts) -> Busiest:
    classes = facts.state.of(PER_CLASS)
    top = int(classes.counts.sum(axis=1).argmax())
    return Busiest(images=facts.state.of(BOX_COUNTS).images, top_class=classes.names[top])


FRAGMENT = (
    '<details class="fold" data-section="busiest"><summary>Busiest: {{ f.busiest.top_class }}</summary>'
    "{{ busiest_bar }}</details>\n"
)


def busiest_figure(findings: FindingsWithBusiest) -> dict[str, object]:
    return {"busiest_bar": "#" * findings.busiest.images}


class FindingsWithBusiest(Findings):
    # the one registration line
    busiest: Annotated[Busiest, Shown(busiest, "busiest", draw=busiest_figure)]


def _marks(page: str) -> list[str]:
    """Every fold and figure of the page, in order, by the name it marks itself with."""
    return re.findall(r'(data-section(?:-figure)?="\w+")', page)


def test_the_page_shows_the_features_once_each_in_the_fields_order(tmp_path: Path) -> None:
    """What the page shows, not a list restated: each registered feature's marks, in field order."""
    inputs = parse_inputs(
        {"GT_DATASET": str(EXAMPLES / "gt.json"), "PRED_DATASET": str(EXAMPLES / "predictions.jsonl")}
    )
    busiest_image = run(inputs, LocalStore(tmp_path)).findings.images_with_most_work[0].asset_id
    result = run(inputs, LocalStore(tmp_path), slices={"busiest": [busiest_image]})
    page = next(tmp_path.glob(f"reports/{result.outputs.report_id}/report.html")).read_text(encoding="utf-8")
    order = [spec.feature for spec in features(Findings)]
    fragments = {
        name: _marks((handler.features.FOLDER / name / "fragment.html.j2").read_text(encoding="utf-8"))
        for name in order
    }
    expected = [mark for name in order for mark in fragments[name] if mark in page]
    assert _marks(page) == expected
    assert len(expected) == len(set(expected)) >= 8


def test_a_registered_section_reaches_the_findings_and_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_fragment(monkeypatch, tmp_path, "busiest", FRAGMENT)
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
    assert f"<summary>Busiest: person</summary>{'#' * 24}</details>" in page
    assert _marks(page)[-1] == 'data-section="busiest"'  # the last field: after every other feature
