"""Each error says which side, the whole path and what to try: the nearest file that exists, what a
file that is not JSON reads as, both IoU values when they look swapped, a names file nearby,
"swapped?" when a results file is given as the ground truth; the class-id warning proposes the
one names option when a names file beside the predictions says the same map."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers.builders import write_tree
from helpers.node_run import one_error_line, run_cli, run_node
from helpers.paths import EXAMPLES, THIRD_PARTY

COCO = THIRD_PARTY / "coco_val2014_100"
VOC = THIRD_PARTY / "voc_padilla_100"


def test_a_mistyped_path_names_its_side_the_whole_path_and_the_nearest_file(tmp_path: Path) -> None:
    mistyped = COCO / "instances_val2014_fakebbox_results.json"
    line = one_error_line(
        run_node(tmp_path, GT_DATASET=str(COCO / "instances_val2014_100.json"), PRED_DATASET=str(mistyped))
    )
    assert line.startswith(f"error: predictions (PRED_DATASET) {mistyped}: no such file or folder")
    assert line.endswith(f"did you mean {COCO / 'instances_val2014_fakebbox100_results.json'}?")


def test_a_csv_named_json_says_it_reads_as_csv(tmp_path: Path) -> None:
    named_json = tmp_path / "boxes.json"
    shutil.copy(VOC / "gts" / "openimages_format" / "all_bounding_boxes.csv", named_json)
    line = one_error_line(
        run_node(
            tmp_path / "store", GT_DATASET=str(named_json), PRED_DATASET=str(EXAMPLES / "predictions.jsonl")
        )
    )
    assert line.startswith(
        f"error: ground truth (GT_DATASET): {named_json}: line 1 column 1: expected valid JSON"
    )
    assert "it reads as CSV (first line 'ImageID,Source,LabelName," in line and "convert it" in line


def test_swapped_iou_bounds_name_both_values(tmp_path: Path) -> None:
    given = {"GT_DATASET": str(EXAMPLES / "gt.json"), "PRED_DATASET": str(EXAMPLES / "predictions.jsonl")}
    line = one_error_line(run_node(tmp_path, IOU_MIN="0.9", IOU_PERFECT="0.5", **given))
    assert "IOU_MIN (--iou-min) 0.9 and IOU_PERFECT (--iou-perfect) 0.5 look swapped" in line
    assert line.endswith("try IOU_MIN=0.5 IOU_PERFECT=0.9")
    cli = run_cli(*given.values(), "--iou-min", "0.9", "--iou-perfect", "0.5", "--store", str(tmp_path))
    assert cli.returncode == 2 and "0.9 and IOU_PERFECT (--iou-perfect) 0.5 look swapped" in cli.stderr
    alone = run_cli(
        *given.values(), "--iou-min", "0.9", "--store", str(tmp_path)
    )  # 0.9 < the default 0.8? no
    assert alone.returncode == 2 and "'0.9' is not one of the options 0.10, 0.20" in alone.stderr


def test_a_yolo_folder_without_names_points_at_the_names_file_one_folder_up(tmp_path: Path) -> None:
    labels = VOC / "gts" / "yolo_format" / "obj_train_data"
    line = one_error_line(
        run_node(tmp_path, GT_DATASET=str(labels), PRED_DATASET=str(VOC / "dets" / "rel_xywh"))
    )
    names = VOC / "gts" / "yolo_format" / "obj.names"
    assert line.startswith("error: ground truth (GT_DATASET): ")
    assert f"{names} is one folder up: pass --gt-names {names} (GT_NAMES)" in line


def test_a_coco_results_file_given_as_the_ground_truth_asks_swapped(tmp_path: Path) -> None:
    results, instances = (
        COCO / "instances_val2014_fakebbox100_results.json",
        COCO / "instances_val2014_100.json",
    )
    line = one_error_line(run_node(tmp_path, GT_DATASET=str(results), PRED_DATASET=str(instances)))
    assert line.startswith(f"error: ground truth (GT_DATASET): {results}: a COCO results list")
    assert "swapped?" in line


def test_the_class_id_warning_proposes_the_names_file_beside_the_predictions(tmp_path: Path) -> None:
    folder = write_tree(tmp_path / "data", {})
    shutil.copytree(VOC / "gts" / "pascalvoc_format", folder / "gts")
    shutil.copytree(VOC / "dets" / "abs_xyx2y2", folder / "dets")
    run = run_node(tmp_path / "store", GT_DATASET=str(folder / "gts"), PRED_DATASET=str(folder / "dets"))
    assert run.code == 0 and "--pred-names" not in run.err  # no names file near: the class map only
    shutil.copy(VOC / "voc.names", folder / "voc.names")
    run = run_node(tmp_path / "store", GT_DATASET=str(folder / "gts"), PRED_DATASET=str(folder / "dets"))
    warning = next(line for line in run.messages if line.startswith("warning: Did you mean"))
    assert f"one option applies it, `--pred-names {folder / 'voc.names'}` (PRED_NAMES" in warning
    assert "or review the report's class_map.json" in warning
    names = run_node(
        tmp_path / "store",
        GT_DATASET=str(folder / "gts"),
        PRED_DATASET=str(folder / "dets"),
        PRED_NAMES=str(folder / "voc.names"),
    )
    assert names.code == 0 and "Did you mean" not in names.err  # the one option does what it says


def test_list_tells_reports_of_one_file_apart(tmp_path: Path) -> None:
    given = (str(EXAMPLES / "gt.json"), str(EXAMPLES / "predictions.jsonl"), "--store", str(tmp_path), "-q")
    assert run_cli(*given, "--confidence-threshold", "0.3").returncode == 0
    assert run_cli(*given, "--iou-min", "0.5", "--iou-perfect", "0.9").returncode == 0
    lines = run_cli("list", "--store", str(tmp_path)).stdout.decode().splitlines()
    assert [line.split("  ")[-3:] for line in lines] == [
        ["conf ≥ 0.5", "IoU 0.5-0.9", "predictions.jsonl vs gt.json"],
        ["conf ≥ 0.3", "IoU 0.3-0.8", "predictions.jsonl vs gt.json"],
    ]


def test_a_broken_ground_truth_is_the_error_said_when_the_predictions_are_broken_too(tmp_path: Path) -> None:
    """The GT is read first and its error is the one line, whatever is wrong with the predictions."""
    gt, pred = tmp_path / "gt.json", tmp_path / "results.json"
    gt.write_text((COCO / "instances_val2014_100.json").read_text()[:-40])
    pred.write_text((COCO / "instances_val2014_fakesegm100_results.json").read_text()[:-40])
    line = one_error_line(run_node(tmp_path / "store", GT_DATASET=str(gt), PRED_DATASET=str(pred)))
    assert line.startswith(f"error: ground truth (GT_DATASET): {gt}: ")
