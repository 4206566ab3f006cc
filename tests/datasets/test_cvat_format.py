"""The CVAT for images 1.1 reader, on files that datumaro (CVAT's own dataset library) writes."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest
from helpers.node_run import one_error_line, run_node
from helpers.paths import EXAMPLES
from helpers.tool_files import Shape, ToolImage, write_cvat
from pycocotools import mask as coco_mask

from handler.datasets import Loaded, load_dataset
from handler.errors import DatasetError
from handler.storage import open_source

IMAGES = [
    ToolImage(
        "a.jpg",
        640,
        480,
        [
            Shape("cat", (10, 20, 110, 220), score=0.9, occluded=True),
            Shape("dog", polygon=(1, 1, 50, 1, 30, 40)),
            Shape("dog", (100, 100, 200, 150), rotation=30),
            Shape("dog", (300.25, 100.5, 400.75, 300)),
        ],
    ),
    ToolImage("b.png", 200, 100, [Shape("dog", (1, 2, 50, 60), score=0.25)]),
    ToolImage("c.jpg", 50, 40),  # an image with no shapes is present
]


@pytest.fixture(scope="module")
def cvat_xml(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_cvat(tmp_path_factory.mktemp("cvat"), IMAGES, ["cat", "dog"])


def read(path: Path | str, fmt: str | None = None) -> Loaded:
    return load_dataset(open_source(str(path)), fmt)


def test_boxes_occluded_ones_included_with_their_scores(cvat_xml: Path) -> None:
    dataset = read(cvat_xml).dataset

    assert dataset.format == "cvat" and dataset.asset_ids == ["a.jpg", "b.png", "c.jpg"]
    assert dataset.class_names == ["cat", "dog"]
    boxes = dataset.boxes[[0, 2, 3, 4]]  # the polygon (row 1) is a mask
    np.testing.assert_array_equal(
        boxes.xyxy, [[10, 20, 110, 220], [100, 100, 200, 150], [300.25, 100.5, 400.75, 300], [1, 2, 50, 60]]
    )
    np.testing.assert_array_equal(dataset.boxes.class_id, [0, 1, 1, 1, 1])
    np.testing.assert_array_equal(dataset.boxes.confidence, [0.9, 1.0, 1.0, 1.0, 0.25])
    assert dataset.confidence_count == 2
    np.testing.assert_array_equal(dataset.widths, [640, 200, 50])


def test_a_rotated_box_is_its_box_turned_about_its_centre_and_a_polygon_is_its_mask(cvat_xml: Path) -> None:
    dataset = read(cvat_xml).dataset

    np.testing.assert_array_equal(dataset.boxes.angle, [0, 0, 30, 0, 0])
    assert dataset.skipped_count == 0
    expected = coco_mask.frPyObjects([[1.0, 1.0, 50.0, 1.0, 30.0, 40.0]], 480, 640)[0]
    polygon = dataset.boxes.mask_runs[[1]]
    runs = {"counts": polygon.counts.tolist(), "size": [480, 640]}
    assert coco_mask.iou([coco_mask.frPyObjects(runs, 480, 640)], [expected], [0])[0, 0] == 1.0
    x, y, width, height = coco_mask.toBbox(expected)
    np.testing.assert_array_equal(dataset.boxes.xyxy[1], [x, y, x + width, y + height])
    assert not dataset.boxes[[0, 2, 3, 4]].mask_runs.present.any()


def test_the_export_folder_and_the_zip_read_as_the_file(cvat_xml: Path, tmp_path: Path) -> None:
    archive = tmp_path / "task_7-cvat for images 1.1.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.write(cvat_xml, "annotations.xml")
        zipped.writestr("images/a.jpg", b"")
    expected = read(cvat_xml).dataset.boxes.xyxy

    for given in (cvat_xml.parent, archive):
        np.testing.assert_array_equal(read(given).dataset.boxes.xyxy, expected)


def test_the_cvat_format_is_forced_and_refused_where_it_does_not_fit(cvat_xml: Path, tmp_path: Path) -> None:
    assert read(cvat_xml, "cvat").dataset.format == "cvat"
    voc = tmp_path / "a.xml"
    voc.write_text("<annotation><filename>a.jpg</filename></annotation>")
    with pytest.raises(
        DatasetError, match=r"expected an <annotations> root element \(CVAT for images 1.1 XML\)"
    ):
        read(voc, "cvat")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            b'<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]>\n'
            b"<annotations><image id='0' name='&lol2;'/></annotations>",
            "a document type declaration: refused",
        ),
        (
            b"<annotations>\n<image id='0' name='a.jpg'>\n</annotations>",
            "line 3 column 3: expected well-formed XML",
        ),
        (
            b"<annotations><track id='0' label='cat'><box frame='0'/></track></annotations>",
            "this is CVAT for video; export the task as CVAT for images 1.1",
        ),
    ],
)
def test_bad_cvat_files_are_one_line_naming_where(content: bytes, message: str, tmp_path: Path) -> None:
    path = tmp_path / "annotations.xml"
    path.write_bytes(content)
    with pytest.raises(DatasetError) as raised:
        read(path)
    assert str(raised.value).startswith(f"{path}: ") and message in str(raised.value)


CORNERS = "label='cat' occluded='0' xtl='1' ytl='1' xbr='5' ybr='5'"


def test_a_score_that_is_not_a_number_skips_its_box(tmp_path: Path) -> None:
    path = tmp_path / "annotations.xml"
    path.write_text(
        "<annotations><version>1.1</version><image id='0' name='a.jpg' width='10' height='10'>"
        f"<box {CORNERS}><attribute name='score'>high</attribute></box>"
        f"<box {CORNERS}><attribute name='score'>0</attribute></box>"
        "</image></annotations>"
    )
    dataset = read(path).dataset

    np.testing.assert_array_equal(dataset.boxes.confidence, [0.0])
    assert dataset.skip_reasons == {"confidence not finite": 1}


def test_the_node_reads_a_cvat_pair(cvat_xml: Path, tmp_path: Path) -> None:
    run = run_node(tmp_path, GT_DATASET=str(cvat_xml), PRED_DATASET=str(cvat_xml), CONFIDENCE_THRESHOLD="0")
    assert run.code == 0, run.err
    broken = tmp_path / "broken.xml"
    broken.write_bytes(b"<annotations><image id='0' name='a.jpg'></annotations>")
    failed = run_node(tmp_path, GT_DATASET=str(broken), PRED_DATASET=str(cvat_xml))
    assert one_error_line(failed).startswith(f"error: ground truth (GT_DATASET): {broken}: line 1 column ")


def test_a_pascal_voc_file_with_a_document_type_declaration_is_refused_too(tmp_path: Path) -> None:
    voc = tmp_path / "voc"
    voc.mkdir()
    (voc / "a.xml").write_bytes(
        b'<!DOCTYPE annotation [<!ENTITY big "x">]><annotation><filename>&big;</filename></annotation>'
    )
    with pytest.raises(DatasetError, match=r"a\.xml: a document type declaration: refused"):
        read(voc, "voc")


def test_the_examples_cvat_files_are_the_native_examples(tmp_path: Path) -> None:
    """docs/with-cvat.md's files: datumaro's CVAT XML of examples/gt.json and predictions.jsonl
    (coordinates rounded to 0.01 px as its exporter writes them)."""
    for native, written in (("gt.json", "gt.xml"), ("predictions.jsonl", "predictions.xml")):
        gt = read(EXAMPLES / "gt.json")
        expected = load_dataset(
            open_source(str(EXAMPLES / native)), None, gt if native != "gt.json" else None
        )
        found = read(EXAMPLES / "cvat" / written).dataset
        assert found.asset_ids == expected.dataset.asset_ids
        names = np.array(found.class_names)[found.boxes.class_id].tolist()
        assert names == np.array(expected.dataset.class_names)[expected.dataset.boxes.class_id].tolist()
        np.testing.assert_allclose(found.boxes.xyxy, expected.dataset.boxes.xyxy, atol=0.005)
