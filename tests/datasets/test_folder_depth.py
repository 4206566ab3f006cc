"""A folder named as a dataset is searched to a bounded depth for the files its format needs, never
walked whole: files deeper than SEARCH_DEPTH folders, and hidden folders, are not the dataset, and a
stray `annotations.xml` inside another dataset's tree is not a CVAT export."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.paths import EXAMPLES, THIRD_PARTY

from handler.cli import main as cli_main
from handler.datasets.folder import SEARCH_DEPTH, Folder
from handler.storage.local import LocalSource

VOC = THIRD_PARTY / "voc_padilla_100"


def _nested(root: Path, depth: int) -> Path:
    folder = root.joinpath(*(f"level{n}" for n in range(1, depth + 1)))
    folder.mkdir(parents=True)
    return folder


def test_files_deeper_than_the_search_depth_and_hidden_folders_are_not_listed(tmp_path: Path) -> None:
    for depth in range(SEARCH_DEPTH + 3):
        (_nested(tmp_path / f"tree{depth}", depth) / "a.txt").write_text("0 0.5 0.5 0.1 0.1\n")
    hidden = tmp_path / ".git" / "objects"
    hidden.mkdir(parents=True)
    (hidden / "b.txt").write_text("x")
    (tmp_path / "linked.txt").symlink_to(tmp_path / "tree0" / "a.txt")
    listed = sorted(
        Folder.of(LocalSource(tmp_path)).relative(f) for f in Folder.of(LocalSource(tmp_path)).files
    )
    expected = [
        "/".join([f"tree{depth}", *(f"level{n}" for n in range(1, depth + 1)), "a.txt"])
        for depth in range(SEARCH_DEPTH)  # tree{d} itself is one folder down
    ]
    assert listed == sorted([*expected, "linked.txt"])


def test_a_stray_annotations_xml_inside_a_yolo_folder_is_not_cvat(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt = tmp_path / "gt"
    shutil.copytree(VOC / "gts" / "yolo_format", gt)
    shutil.copy(EXAMPLES / "cvat" / "gt.xml", _nested(gt / "backup", 1) / "annotations.xml")
    store = str(tmp_path / "s")
    assert cli_main([str(gt), str(gt), "--store", store, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["dataset"]["gt_read_as"][0] == "yolo"


def test_a_stray_xml_inside_a_voc_folder_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """VOC reads every .xml of its folder: one of another kind is one line naming it."""
    gt = tmp_path / "gt"
    shutil.copytree(VOC / "gts" / "pascalvoc_format", gt / "Annotations")
    stray = _nested(gt / "backup", 2) / "annotations.xml"
    shutil.copy(EXAMPLES / "cvat" / "gt.xml", stray)
    assert cli_main([str(gt), str(gt), "--store", str(tmp_path / "s")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    side = "ground truth (GT_DATASET)"
    assert (
        line
        == f"error: {side}: {stray}: expected an <annotation> root element (Pascal VOC), found <annotations>"
    )


def test_a_cvat_export_one_folder_down_is_still_found(tmp_path: Path) -> None:
    export = _nested(tmp_path / "task_7", 1)
    shutil.copy(EXAMPLES / "cvat" / "gt.xml", export / "annotations.xml")
    store = str(tmp_path / "s")
    assert (
        cli_main([str(tmp_path / "task_7"), str(EXAMPLES / "cvat" / "predictions.xml"), "--store", store])
        == 0
    )
