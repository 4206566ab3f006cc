"""A new feature is one folder (handler/features/<name>/: its partial, its section, its fragment)
and one field on `Findings`: the shards run its partial (the folder is found), its section reads the
merged partial with `state.of(...)`, and the page shows its fragment at its field's place."""

from __future__ import annotations

import functools
import operator
from pathlib import Path
from typing import Annotated

import msgspec
import numpy as np
import orjson
import pytest
from helpers.features import add_fragment
from helpers.paths import EXAMPLES
from helpers.states import canonical

import handler.features
import handler.report.findings.build
import handler.report.page.html
from handler.datasets import load_dataset, pair_datasets
from handler.engine.evaluation import Evaluation
from handler.engine.plugin import Analysis, ShardContext
from handler.execution import ExecutionOptions, evaluate_plan, read_and_plan
from handler.execution.shards import paired_shards, run_paired_shard
from handler.features import ANALYSES
from handler.inputs import parse_inputs
from handler.pipeline import run
from handler.report.findings.model import Findings
from handler.sections.context import RunFacts
from handler.sections.fields import Count, Section
from handler.sections.shown import Shown
from handler.storage import open_source
from handler.storage.local import LocalStore

# --- the analysis's module: its partial, its per-shard function, its merge ---


class Crowded(msgspec.Struct, frozen=True):
    """The most GT boxes on one image, and how many images have that many (merge: the max wins)."""

    most: int
    images: int

    def __add__(self, other: Crowded) -> Crowded:
        if self.most != other.most:
            return max(self, other, key=lambda part: part.most)
        return Crowded(self.most, self.images + other.images)


def crowded(evaluation: Evaluation, context: ShardContext) -> Crowded:
    per_image = np.bincount(evaluation.gt.image, minlength=len(context.asset_ids))
    most = int(per_image.max(initial=0))
    return Crowded(most, int(np.count_nonzero(per_image == most)) if most else 0)


CROWDED = Analysis[Crowded]("crowded", crowded, Crowded.__add__)

# --- its section.py and its fragment.html.j2 ---


class CrowdedSection(Section):
    most_gt_boxes_on_an_image: Count
    images: Count


def crowded_section(facts: RunFacts) -> CrowdedSection:
    found = facts.state.of(CROWDED)
    return CrowdedSection(most_gt_boxes_on_an_image=found.most, images=found.images)


FRAGMENT = (
    '<p data-section="crowded">Most GT boxes on an image: {{ f.crowded.most_gt_boxes_on_an_image }}</p>\n'
)


class FindingsWithCrowded(Findings):
    # the one registration line
    crowded: Annotated[CrowdedSection, Shown(crowded_section, "crowded")]


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """What its folder in handler/features/ does: the shards run `CROWDED` (the folder's partial.py is
    found), and the page's loader finds crowded/fragment.html.j2."""
    monkeypatch.setattr(handler.features, "ANALYSES", (*ANALYSES, CROWDED))
    add_fragment(monkeypatch, tmp_path, "crowded", FRAGMENT)


def test_a_registered_analysis_merges_like_one_shot() -> None:
    gt = load_dataset(open_source(str(EXAMPLES / "gt.json")))
    pred = load_dataset(open_source(str(EXAMPLES / "predictions.jsonl")), None, gt)
    paired = pair_datasets(gt.dataset, pred.dataset)
    thresholds = parse_inputs({"GT_DATASET": "x", "PRED_DATASET": "y"}).thresholds

    def merged(shards: int) -> dict[str, object]:
        tasks = paired_shards(paired, thresholds, shards, (*ANALYSES, CROWDED))
        states = [run_paired_shard(task).state for task in tasks]
        return canonical(functools.reduce(operator.add, states[::-1]))

    one_shot = merged(1)
    assert one_shot["crowded"] == {"most": 13, "images": 1}
    assert merged(3) == merged(5) == one_shot


def test_a_registered_analysis_reaches_the_state_the_findings_and_the_page(
    registered: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inputs = parse_inputs(
        {"GT_DATASET": str(EXAMPLES / "gt.json"), "PRED_DATASET": str(EXAMPLES / "predictions.jsonl")}
    )
    store = LocalStore(tmp_path / "store")
    evaluated = evaluate_plan(
        read_and_plan(inputs, store, ExecutionOptions(), handler.features.ANALYSES), None
    )
    assert evaluated.state.of(CROWDED) == Crowded(13, 1)

    monkeypatch.setattr(handler.report.findings.build, "Findings", FindingsWithCrowded)
    result = run(inputs, store)

    expected = {"most_gt_boxes_on_an_image": 13, "images": 1}
    assert result.findings.document()["crowded"] == expected
    report = tmp_path / "store" / "reports" / result.outputs.report_id
    assert orjson.loads((report / "findings.json").read_bytes())["crowded"] == expected
    page = (report / "report.html").read_text(encoding="utf-8")
    assert '<p data-section="crowded">Most GT boxes on an image: 13</p>' in page
    # At its field's place: the last field, so after every other feature's fragment.
    assert page.index('data-section="crowded"') > page.index('data-section="work"')
