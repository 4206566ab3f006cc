"""Slices: a --slices file and native asset tags, each scored from its own images' merged counts."""

from __future__ import annotations

import functools
import operator
import subprocess
import sys
from pathlib import Path
from random import Random
from typing import Any

import pytest
from helpers.bootstrap_reference import reference_bootstrap
from helpers.builders import annotation, asset, write_json
from helpers.reference import (
    FALSE_POSITIVE,
    OUTCOME_NAMES,
    GtBox,
    PredBox,
    RefImage,
    evaluate_image,
    grade,
    score,
)

from handler.datasets import load_dataset, pair_datasets
from handler.datasets.native import asset_tags
from handler.engine.bootstrap import LEVEL, RESAMPLES, SEED
from handler.engine.evaluation import Thresholds
from handler.engine.timecost import TimeCosts
from handler.execution.shards import paired_shards, run_paired_shard
from handler.features import ANALYSES
from handler.features.slices.section import slices
from handler.inputs import parse_inputs
from handler.pipeline import run
from handler.sections.context import DatasetNames, RunFacts
from handler.storage import open_source
from handler.storage.local import LocalStore

CLASSES = ("car", "dog")
TAGS = ("night", "rain", "city")


def _case(seed: int, n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[RefImage]]:
    """Random native GT and predictions with asset tags, and the same images for the reference."""
    rng = Random(seed)
    gt_assets, pred_assets, images = [], [], []
    for i in range(n):
        gt_boxes, preds = [], []
        for _ in range(rng.randint(0, 4)):
            x, y, c = rng.uniform(0, 60), rng.uniform(0, 60), rng.randrange(2)
            gt_boxes.append(((x, y, x + 30, y + 30), c))
            if rng.random() < 0.8:
                dx = rng.uniform(-8, 8)
                pc = c if rng.random() < 0.85 else 1 - c
                preds.append(((x + dx, y, x + 30 + dx, y + 30), pc, round(rng.uniform(0.5, 1), 2)))
        tags = [t for t in TAGS if rng.random() < 0.4]
        gt_assets.append(
            {**asset(f"a{i}", [annotation((CLASSES[c], *box)) for box, c in gt_boxes]), "tags": tags}
        )
        pred_assets.append(asset(f"a{i}", [annotation((CLASSES[c], *box), p) for box, c, p in preds]))
        images.append(
            RefImage(
                tuple(GtBox(box, c) for box, c in gt_boxes),
                tuple(PredBox(box, c, p) for box, c, p in preds),
            )
        )
    return gt_assets, pred_assets, images


def _reference_counts(images: list[RefImage]) -> list[tuple[int, int, int, int, int]]:
    """Per image: a matched pair counts once (its GT box's outcome), false positives from the predictions."""
    found = []
    for image in images:
        result = evaluate_image(image, 0.5, 0.3, 0.8)
        c, s, x, _, fn = (result.gt_outcomes.count(name) for name in OUTCOME_NAMES)
        found.append((c, s, x, result.pred_outcomes.count(FALSE_POSITIVE), fn))
    return found


@pytest.fixture
def case(tmp_path: Path) -> tuple[Path, Path, list[RefImage], list[dict[str, Any]]]:
    gt, pred, images = _case(11, 40)
    return write_json(tmp_path / "gt.json", gt), write_json(tmp_path / "pred.json", pred), images, gt


def test_slices_are_the_reference_on_their_images(
    tmp_path: Path, case: tuple[Path, Path, list[RefImage], list[dict[str, Any]]]
) -> None:
    gt_path, pred_path, images, gt = case
    listed = {
        "first ten": [f"a{i}" for i in range(10)] + ["not-there"],
        "odd": [f"a{i}" for i in range(1, 40, 2)],
    }
    raw = {"GT_DATASET": str(gt_path), "PRED_DATASET": str(pred_path)}
    found = run(parse_inputs(raw), LocalStore(tmp_path / "store"), slices=listed).findings.document()[
        "slices"
    ]
    per_image = _reference_counts(images)
    by_tag = {tag: [f"a{i}" for i, a in enumerate(gt) if tag in a["tags"]] for tag in TAGS}
    expected = [(name, "file", ids) for name, ids in listed.items()]
    expected += [(tag, "tag", ids) for tag, ids in sorted(by_tag.items()) if ids]
    assert [(row["name"], row["source"]) for row in found] == [(name, source) for name, source, _ in expected]
    costs = tuple(TimeCosts().per_outcome())
    for row, (_, _, ids) in zip(found, expected, strict=True):
        rows = [int(i[1:]) for i in ids if i != "not-there"]
        sums = functools.reduce(lambda a, b: tuple(map(operator.add, a, b)), (per_image[r] for r in rows))
        c, s, x, _, _ = sums
        assert [row["counts"][name] for name in OUTCOME_NAMES] == list(sums)
        assert row["images"] == len(rows)
        assert row["unscored_assets"] == (1 if row["name"] == "first ten" else 0)
        assert row["assistance_score"] == float(score(c, s, x, sum(sums)))
        assert row["grade"] == grade(c, s, x, sum(sums))
        ref = reference_bootstrap([per_image[r] for r in rows], costs, RESAMPLES, SEED, LEVEL)
        assert (row["score_low"], row["score_high"]) == ref.score


def test_tag_slices_do_not_depend_on_the_shards(
    case: tuple[Path, Path, list[RefImage], list[dict[str, Any]]],
) -> None:
    gt_path, pred_path, _, _ = case
    gt = load_dataset(open_source(str(gt_path)), None)
    pred = load_dataset(open_source(str(pred_path)), None, gt)
    paired = pair_datasets(gt.dataset, pred.dataset)
    thresholds = Thresholds(0.3, 0.8, 0.5)

    def merged(shards: int) -> Any:
        states = [run_paired_shard(t).state for t in paired_shards(paired, thresholds, shards, ANALYSES)]
        state = functools.reduce(operator.add, states[::-1])  # merged out of order
        inputs = parse_inputs({"GT_DATASET": str(gt_path), "PRED_DATASET": str(pred_path)})
        names = DatasetNames(str(gt_path), "native")
        return RunFacts(inputs, names, names, state)

    assert slices(merged(1)) == slices(merged(4))


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        (["night", "night", "rain"], ("night", "rain")),
        ([{"name": "weather", "value": "rain"}, {"name": "reviewed"}], ("weather=rain", "reviewed")),
        ({"weather": "sun", "checked": True, "skip": None}, ("weather=sun", "checked", "skip")),
        ("not a list", ()),
        ([3, {"value": 1}], ()),
    ],
)
def test_asset_tags_are_read(tags: Any, expected: tuple[str, ...]) -> None:
    assert asset_tags({"asset_id": "a", "tags": tags}) == expected


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read it"),
        ("{not json", "not JSON"),
        ('["a"]', "expected a JSON object of slice name -> list of asset ids"),
        ('{"x": "a.jpg"}', "expected a JSON object of slice name -> list of asset ids"),
    ],
)
def test_a_bad_slices_file_is_one_line_and_exit_2(
    tmp_path: Path,
    case: tuple[Path, Path, list[RefImage], list[dict[str, Any]]],
    content: str | None,
    message: str,
) -> None:
    gt_path, pred_path, _, _ = case
    slices_file = tmp_path / "slices.json"
    if content is not None:
        slices_file.write_text(content, encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "handler.cli",
            str(gt_path),
            str(pred_path),
            "--slices",
            str(slices_file),
            "--store",
            str(tmp_path / "store"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and message in done.stderr
    assert "Traceback" not in done.stderr
