"""One `open_side` for the node, `compare` and the Python API: a side reads the same through each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.paths import THIRD_PARTY
from helpers.s3_server import FaultProxy

from handler.comparison import compare
from handler.datasets.layouts import parse_layout
from handler.datasets.side import SideSpec, open_side
from handler.errors import InputError
from handler.inputs import parse_inputs
from handler.metric import PrelabelingEfficiency, load_records
from handler.pipeline import run
from handler.storage.local import LocalStore

VOC = THIRD_PARTY / "voc_padilla_100"
YOLO_GT = VOC / "gts" / "yolo_format"  # ids index obj.names, in the folder
REL_XYWH = VOC / "dets" / "rel_xywh"  # `class score cx cy w h`, ids index voc.names (not in the folder)
VOC_NAMES = VOC / "voc.names"
PRED_READ_RIGHT = {"pred_layout": "class score cx cy w h", "pred_names": str(VOC_NAMES)}
COCO = THIRD_PARTY / "coco_val2014_100"


def _api_counts(**options: str) -> dict[str, int]:
    records = load_records(str(YOLO_GT), str(REL_XYWH), store=LocalStore(Path("/nonexistent")), **options)
    metric = PrelabelingEfficiency()
    metric.add(records.predictions, records.groundtruths)
    return metric.compute().counts.outcomes()


def test_load_records_takes_names_and_layout_and_reads_as_the_node(tmp_path: Path) -> None:
    raw = {"GT_DATASET": str(YOLO_GT), "PRED_DATASET": str(REL_XYWH)}
    node = run(
        parse_inputs({**raw, **{key.upper(): value for key, value in PRED_READ_RIGHT.items()}}),
        LocalStore(tmp_path),
    )
    read_right = _api_counts(**PRED_READ_RIGHT)
    assert read_right == node.findings.counts.outcomes()
    # test_mixups' figures, and the 2 GT images the folder has no label file for: their 2 boxes missed
    assert read_right["correct"] == 92 and read_right["false_negative"] == 82
    # Without them the same files read otherwise (corners, the GT's names): the options apply.
    assert _api_counts()["correct"] < read_right["correct"]


def test_a_read_option_of_the_python_api_is_refused_naming_it() -> None:
    with pytest.raises(InputError, match=r"--pred-layout \(PRED_LAYOUT\): "):
        _api_counts(pred_layout="score class cx cy w h")
    with pytest.raises(InputError, match=r"--pred-names FILE \(PRED_NAMES\): .*cannot read it"):
        _api_counts(pred_names=str(VOC / "none.names"))


def test_open_side_reads_the_names_file_and_tells_the_reader(tmp_path: Path) -> None:
    spec = SideSpec.given("pred", str(REL_XYWH), None, names=str(VOC_NAMES), layout="class score cx cy w h")
    opened = open_side(spec, LocalStore(tmp_path))
    assert spec.layout == parse_layout("class score cx cy w h")
    assert opened.options.names is not None and opened.options.names.by_id[0] == "aeroplane"
    assert opened.options.layout == spec.layout and opened.source.is_dir()


def _gets_of(proxy: FaultProxy, bucket: str, key: str) -> int:
    return sum(path.split("?")[0] == f"/{bucket}/{key}" for path in proxy.paths("GET"))


def test_compare_reads_the_gt_once(
    s3_bucket: str, s3_client: Any, fault_proxy: FaultProxy, tmp_path: Path
) -> None:
    files = {
        "gt.json": COCO / "instances_val2014_100.json",
        "a.json": COCO / "instances_val2014_fakebbox100_results.json",
        "b.json": COCO / "instances_val2014_fakebbox100_results.json",
    }
    for key, path in files.items():
        s3_client.put_object(Bucket=s3_bucket, Key=key, Body=path.read_bytes())
    found = compare(*(f"s3://{s3_bucket}/{key}" for key in files), store=LocalStore(tmp_path))
    assert found.context.same_predictions
    assert {key: _gets_of(fault_proxy, s3_bucket, key) for key in files} == {
        "gt.json": 1,
        "a.json": 1,
        "b.json": 1,
    }


def test_a_class_map_file_is_read_when_the_side_is_opened(tmp_path: Path) -> None:
    class_map = tmp_path / "class_map.json"
    class_map.write_text('{"14": "person"}')
    opened = open_side(SideSpec.given("pred", str(REL_XYWH), class_map=str(class_map)), LocalStore(tmp_path))
    assert opened.options.class_map == {"14": "person"}
    class_map.write_text('["person"]')
    with pytest.raises(
        InputError, match=r"--pred-class-map FILE \(PRED_CLASS_MAP\): .*expected a JSON object"
    ):
        open_side(SideSpec.given("pred", str(REL_XYWH), class_map=str(class_map)), LocalStore(tmp_path))
