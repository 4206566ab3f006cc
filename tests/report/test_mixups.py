"""Export mix-ups on real third-party files: each raises its warning, the options read it right."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import THIRD_PARTY

from handler.cli import main as cli_main
from handler.inputs import parse_inputs
from handler.pipeline import RunResult, run
from handler.report.findings import DataWarning
from handler.storage.local import LocalStore

VOC = THIRD_PARTY / "voc_padilla_100"
YOLO_GT = VOC / "gts" / "yolo_format"  # ids index obj.names
XML_GT = VOC / "gts" / "pascalvoc_format"
REL_XYWH = VOC / "dets" / "rel_xywh"  # `class score cx cy w h`, ids index voc.names (not in the folder)
ABS_XYWH = VOC / "dets" / "abs_xywh"  # `class score x y w h` in pixels
VOC_NAMES = VOC / "voc.names"
TOY = THIRD_PARTY / "padilla_toy_7"
COCO = THIRD_PARTY / "coco_val2014_100"
READ_RIGHT = {"PRED_LAYOUT": "class score cx cy w h", "PRED_NAMES": str(VOC_NAMES)}
# false_negative counts the 2 boxes of the 2 GT images the dets folder has no label file for
# (a text folder's missing label file is an image with no predictions).
RIGHT_COUNTS = {
    "correct": 92,
    "shifted": 93,
    "class_confused": 6,
    "false_positive": 171,
    "false_negative": 82,
}


def _run(tmp_path: Path, gt: Path, pred: Path, **extra: str) -> RunResult:
    raw = {"GT_DATASET": str(gt), "PRED_DATASET": str(pred), **extra}
    return run(parse_inputs(raw), LocalStore(tmp_path / "store"))


def _warnings(result: RunResult) -> dict[str, DataWarning]:
    return {warning.code: warning for warning in result.findings.warnings}


def _class_map(tmp_path: Path, result: RunResult) -> Path:
    """The class map the warning proposes, written where the user would keep it after review."""
    reading = result.findings.other_reading
    assert reading is not None and reading.class_map
    file = tmp_path / "class_map.json"
    file.write_text(json.dumps(reading.class_map))
    return file


def test_the_sketches_are_of_the_listed_images_only_when_a_reading_withholds_the_suspects(
    tmp_path: Path,
) -> None:
    """The sketches' pass chooses its images before the search for other readings ends, suspects
    included (here a dozen more images): a suspect the found reading withholds is not drawn."""
    result = _run(tmp_path, YOLO_GT, REL_XYWH, PRED_LAYOUT="class score cx cy w h")
    found = result.findings
    assert found.other_reading is not None and found.suspected_gt_errors.listed == ()
    listed = {image.asset_id for image in found.images_with_most_work}
    listed |= {pair.asset_id for pair in found.near_misses.listed}
    sketched = result.page["sketch_of"]
    assert isinstance(sketched, dict) and set(sketched) == listed


def test_a_class_order_mix_up_proposes_the_mapping_and_blames_no_gt_box(tmp_path: Path) -> None:
    result = _run(tmp_path, YOLO_GT, REL_XYWH, PRED_LAYOUT="class score cx cy w h")
    assert list(_warnings(result)) == ["other_reading"]
    warning = _warnings(result)["other_reading"]
    assert (
        warning.figures["option"] == "PRED_CLASS_MAP" and "--pred-class-map class_map.json" in warning.message
    )
    suspects = result.findings.suspected_gt_errors
    assert suspects.count == 0 and suspects.listed == () and suspects.withheld is not None
    assert result.findings.assistance_score == pytest.approx(0.215, abs=5e-4)
    fixed = _run(
        tmp_path,
        YOLO_GT,
        REL_XYWH,
        PRED_LAYOUT="class score cx cy w h",
        PRED_CLASS_MAP=str(_class_map(tmp_path, result)),
    )
    # The mapping read from the matches: classes with too few matches keep their ids.
    assert fixed.findings.assistance_score == pytest.approx(warning.figures["score"], abs=1e-4)
    assert fixed.findings.assistance_score == pytest.approx(0.32, abs=0.01)


def test_the_names_the_warning_asks_for_give_the_right_score(tmp_path: Path) -> None:
    result = _run(tmp_path, YOLO_GT, REL_XYWH, **READ_RIGHT)
    assert result.findings.warnings == ()
    assert result.findings.counts.outcomes() == RIGHT_COUNTS
    assert result.findings.assistance_score == pytest.approx(0.319, abs=5e-4)


@pytest.mark.parametrize("kind", ["yaml", "coco"])
def test_names_come_from_a_data_yaml_or_a_coco_files_categories(kind: str, tmp_path: Path) -> None:
    names = VOC_NAMES.read_text().split()
    if kind == "yaml":
        file = tmp_path / "data.yaml"
        file.write_text("names:\n" + "".join(f"  {i}: {name}\n" for i, name in enumerate(names)))
    else:  # COCO ids from 1: the class ids index the categories in their order
        file = tmp_path / "instances.json"
        categories = [{"id": i + 1, "name": name} for i, name in enumerate(names)]
        file.write_text(json.dumps({"images": [], "annotations": [], "categories": categories}))
    result = _run(tmp_path, YOLO_GT, REL_XYWH, PRED_LAYOUT="class score cx cy w h", PRED_NAMES=str(file))
    assert result.findings.counts.outcomes() == RIGHT_COUNTS


def test_results_with_ids_counted_from_zero_name_the_shift_and_read_right_with_names(tmp_path: Path) -> None:
    gt = VOC / "gts" / "coco_format_v1" / "instances_default.json"  # category ids 1..20, obj.names order
    document = json.loads(gt.read_text())
    results = [
        {"image_id": a["image_id"], "category_id": a["category_id"] - 1, "bbox": a["bbox"], "score": 0.9}
        for a in document["annotations"]
    ]
    pred = tmp_path / "results.json"
    pred.write_text(json.dumps(results))
    result = _run(tmp_path, gt, pred)
    warnings = _warnings(result)
    assert "counted from 0" in warnings["other_reading"].message
    assert warnings["boxes_skipped"].figures["reason"] == "class not in the categories"
    for fixed in (
        _run(tmp_path, gt, pred, PRED_NAMES=str(YOLO_GT / "obj.names")),
        _run(tmp_path, gt, pred, PRED_CLASS_MAP=str(_class_map(tmp_path, result))),
    ):
        assert fixed.findings.counts.correct == len(results)
        assert [w.code for w in fixed.findings.warnings] == ["predictions_equal_ground_truth"]


def test_a_score_in_the_second_column_read_as_yolo_names_the_layout_that_fits(tmp_path: Path) -> None:
    warning = _warnings(_run(tmp_path, YOLO_GT, REL_XYWH))["layout_mismatch"]
    assert warning.figures["layout_fitting"] == "class score cx cy w h (normalised)"
    assert '--pred-layout "class score cx cy w h"' in warning.message


def test_pixel_corner_and_size_read_as_corners_proposes_x_y_w_h(tmp_path: Path) -> None:
    result = _run(tmp_path, XML_GT, ABS_XYWH, PRED_NAMES=str(VOC_NAMES))
    warning = _warnings(result)["other_reading"]
    assert "layout_mismatch" not in _warnings(result)  # the re-scored reading says it
    assert warning.figures["option"] == "PRED_BOX" and '--pred-box "x y w h"' in warning.message
    for read_right in ({"PRED_LAYOUT": "class score x y w h"}, {"PRED_BOX": "x y w h"}):
        fixed = _run(tmp_path, XML_GT, ABS_XYWH, PRED_NAMES=str(VOC_NAMES), **read_right)
        assert fixed.findings.warnings == () and fixed.findings.counts.outcomes() == RIGHT_COUNTS
        assert fixed.findings.assistance_score == pytest.approx(warning.figures["score"], abs=1e-4)


def test_the_centre_normalised_toy_is_named_as_such_and_reads_right_with_the_layouts(tmp_path: Path) -> None:
    gt, pred = TOY / "groundtruths_rel", TOY / "detections_rel"
    warning = _warnings(_run(tmp_path, gt, pred))["layout_mismatch"]
    assert '--gt-layout "class cx cy w h"' in warning.message and "x y w h" not in warning.message
    layouts = {"GT_LAYOUT": "class cx cy w h", "PRED_LAYOUT": "class score cx cy w h", "IOU_MIN": "0.3"}
    centre = _run(tmp_path, gt, pred, **layouts)
    corner = _run(
        tmp_path,
        TOY / "groundtruths",
        TOY / "detections",
        GT_LAYOUT="class x y w h",
        PRED_LAYOUT="class score x y w h pixels",
        IOU_MIN="0.3",
    )
    for result in (centre, corner):
        assert result.findings.warnings == () and result.findings.dataset.gt_objects == 15
    assert centre.findings.counts == corner.findings.counts


def test_results_for_another_dataset_say_so_with_the_counts(tmp_path: Path) -> None:
    result = _run(
        tmp_path, COCO / "instances_val2014_100.json", THIRD_PARTY / "sahi_visdrone_2" / "result.json"
    )
    warnings = _warnings(result)
    assert next(iter(warnings)) == "predictions_elsewhere"
    assert (
        "0 of 89 predictions refer to one of the 100 ground-truth images"
        in warnings["predictions_elsewhere"].message
    )
    assert "`image not in the images` (89)" in warnings["boxes_skipped"].message
    assert "unreadable row" not in warnings["boxes_skipped"].message


def test_predictions_equal_to_the_ground_truth_are_an_info_note(tmp_path: Path) -> None:
    result = _run(tmp_path, XML_GT, XML_GT)
    assert [(w.code, w.severity) for w in result.findings.warnings] == [
        ("predictions_equal_ground_truth", "info")
    ]


def _exit_code(argv: list[str]) -> int | str | None:
    """The CLI's exit code, whether it returns it or argparse exits with it."""
    try:
        return cli_main(argv)
    except SystemExit as stop:
        return stop.code


def test_the_options_work_on_the_cli_and_errors_name_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = ["--store", str(tmp_path / "store"), "-q", "--json"]
    options = ["--pred-layout", "class score cx cy w h", "--pred-names", str(VOC_NAMES)]
    assert cli_main([str(YOLO_GT), str(REL_XYWH), *options, *store]) == 0
    assert json.loads(capsys.readouterr().out)["counts"]["correct"] == RIGHT_COUNTS["correct"]
    refused = [
        ([str(YOLO_GT), str(REL_XYWH), "--pred-layout", "score class cx cy w h"], "--pred-layout"),
        (
            [str(YOLO_GT), str(REL_XYWH), "--pred-names", str(tmp_path / "none.names")],
            "--pred-names FILE (PRED_NAMES)",
        ),
        (
            [
                str(COCO / "instances_val2014_100.json"),
                str(COCO / "instances_val2014_fakebbox100_results.json"),
                "--gt-layout",
                "class x y w h",
            ],
            "--gt-layout (GT_LAYOUT): the coco format has no use for it",
        ),
    ]
    for argv, named in refused:
        assert _exit_code([*argv, *store]) == 2
        error = capsys.readouterr().err
        assert named in error and error.count("\n") == 1


def test_the_options_work_as_keys_of_an_inputs_file(tmp_path: Path) -> None:
    inputs = tmp_path / "inputs.json"
    inputs.write_text(json.dumps({"GT_DATASET": str(YOLO_GT), "PRED_DATASET": str(REL_XYWH), **READ_RIGHT}))
    env = {**os.environ, "PRELABEL_STORE": str(tmp_path / "store")}
    node = subprocess.run(
        [sys.executable, "-m", "handler", "-q", "--inputs", str(inputs)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert node.returncode == 0 and node.stderr == "", node.stderr
    inputs.write_text(
        json.dumps({"GT_DATASET": str(YOLO_GT), "PRED_DATASET": str(REL_XYWH), "PRED_LAYOUT": "cx"})
    )
    node = subprocess.run(
        [sys.executable, "-m", "handler", "-q", "--inputs", str(inputs)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert node.returncode == 2 and "PRED_LAYOUT" in node.stderr and node.stderr.count("\n") == 1


def test_a_names_file_beside_the_labels_gives_way_to_the_option(tmp_path: Path) -> None:
    folder = tmp_path / "dets"
    shutil.copytree(REL_XYWH, folder)
    shutil.copy(YOLO_GT / "obj.names", folder / "obj.names")  # the wrong list, in the folder
    result = _run(tmp_path, YOLO_GT, folder, **READ_RIGHT)
    assert result.findings.counts.outcomes() == RIGHT_COUNTS
