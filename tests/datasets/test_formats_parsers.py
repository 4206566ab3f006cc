"""Each format's pure parser on strings, no files: table-driven, with an expected-error column."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from handler.boxes import BoxTable, Dataset
from handler.datasets.cartucho import EXPECTED as CARTUCHO_EXPECTED
from handler.datasets.cartucho import is_cartucho_label_file, parse_cartucho, parse_cartucho_line
from handler.datasets.labels import ClassSpace, Row, parse_lines
from handler.datasets.loaded import Loaded
from handler.datasets.names import parse_names, parse_yaml_names
from handler.datasets.prediction_cache import read_prediction_cache
from handler.datasets.voc import parse_voc
from handler.datasets.yolo import EXPECTED as YOLO_EXPECTED
from handler.datasets.yolo import is_yolo_label_file, looks_like_yolo, parse_yolo, parse_yolo_line
from handler.errors import DatasetError


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("0 0.5 0.5 0.2 0.4", Row("0", (0.4, 0.3, 0.6, 0.7))),
        ("3 0.5 0.5 0.2 0.4 0.87", Row("3", (0.4, 0.3, 0.6, 0.7), confidence=0.87)),
        ("1.0\t0.5 0.5 0.2 0.4", Row("1", (0.4, 0.3, 0.6, 0.7))),  # float class ids, tabs
        ("0 0.5 0.5 0.2", f"{YOLO_EXPECTED}, got 4 values"),
        ("0 0.5 0.5 0.2 0.4 0.9 0.1", f"{YOLO_EXPECTED}, got 7 values"),
        ("0.5 0.5 0.5 0.2 0.4", "class id '0.5' is not a whole number"),
        ("-1 0.5 0.5 0.2 0.4", "class id '-1' is not a whole number"),
        ("car 0.5 0.5 0.2 0.4", "'car' is not a number"),
        ("0 0,5 0.5 0.2 0.4", "'0,5' is not a number"),
    ],
)
def test_yolo_line(line: str, expected: Row | str) -> None:
    parsed = parse_yolo_line(line.split())
    if isinstance(expected, str):
        assert parsed == expected
    else:
        assert isinstance(parsed, Row) and parsed.class_token == expected.class_token
        assert parsed.xyxy == pytest.approx(expected.xyxy) and parsed.confidence == expected.confidence


def test_yolo_text_keeps_line_numbers_and_leaves_bad_boxes_to_the_builder() -> None:
    """The parser rejects only what it cannot split; a bad box or NaN score is a row the
    builder's rules skip (tests/datasets/test_rules.py)."""
    text = "0 0.5 0.5 0.2 0.2\r\n\r\n1 0.5 0.5 0.2\r\n2 0.5 0.5 -0.1 0.2\r\n3 0.5 0.5 0.2 0.2 nan\r\n"
    labels = parse_yolo(text)
    assert labels.class_token == ["0", "2", "3"] and labels.line.tolist() == [1, 4, 5]
    assert labels.has_confidence.tolist() == [False, False, True] and np.isnan(labels.confidence[2])
    assert labels.rejected == [(3, f"{YOLO_EXPECTED}, got 4 values")]


def test_an_empty_yolo_file_is_an_image_with_no_boxes() -> None:
    labels = parse_yolo("")
    assert len(labels) == 0 and labels.xyxy.shape == (0, 4) and labels.rejected == []


@pytest.mark.parametrize(
    ("text", "is_label"),
    [
        ("", True),
        ("0 0.5 0.5 0.2 0.2\n", True),
        ("0 0.5 0.5\n", True),  # a broken label file is still one: its line is skipped and counted
        ("data/obj_train_data/2007_001585.jpg\n", False),  # darknet / CVAT train.txt
        ("# Cars > 2023-05-01\nProvided by Roboflow\n", False),  # Roboflow README.dataset.txt
    ],
)
def test_which_txt_files_are_yolo_labels(text: str, is_label: bool) -> None:
    assert is_yolo_label_file(text) is is_label


def test_pixel_lines_with_class_ids_are_not_yolo() -> None:
    assert looks_like_yolo("14 0.43 0.52 0.43 0.38 0.49\n")
    assert not looks_like_yolo("14 0.431418 162.000000 96.000000 351.000000 341.000000\n")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("chair 176 206 225 266", Row("chair", (176, 206, 225, 266))),
        ("tvmonitor 0.471781 0 13 174 244", Row("tvmonitor", (0, 13, 174, 244), confidence=0.471781)),
        ("potted plant 0.5 1 2 3 4", Row("potted plant", (1, 2, 3, 4), confidence=0.5)),
        ("chair 1 2 3 4 difficult", Row("chair", (1, 2, 3, 4), difficult=True)),
        ("14 0.43 162 96 351 341", Row("14", (162, 96, 351, 341), confidence=0.43)),
        ("14 162 96 351 341", Row("14", (162, 96, 351, 341))),
        ("chair 1 2 3", CARTUCHO_EXPECTED),
        ("1 2 3 4", CARTUCHO_EXPECTED),
    ],
)
def test_cartucho_line(line: str, expected: Row | str) -> None:
    assert parse_cartucho_line(line.split()) == expected


def test_cartucho_text_and_its_label_files() -> None:
    labels = parse_cartucho("chair 1 2 3 4\nbook 0.9 5 6 7 8\n")
    assert (
        labels.class_token == ["chair", "book"]
        and np.isnan(labels.confidence[0])
        and labels.confidence[1] == 0.9
    )
    assert is_cartucho_label_file("") and is_cartucho_label_file("chair 1 2 3 4 difficult\n")
    assert not is_cartucho_label_file("images/2007_000027.jpg\n")


VOC = """<annotation>
  <filename>images/2007_000027.jpg</filename>
  <size><width>486</width><height>500</height><depth>3</depth></size>
  <object><name>person</name><difficult>0</difficult>
    <bndbox><xmin>174</xmin><ymin>101</ymin><xmax>349</xmax><ymax>351</ymax></bndbox></object>
  <object><name>dog</name>
    <bndbox><xmin>1</xmin><ymin>2</ymin><xmax>3</xmax></bndbox></object>
  <object><name>cat</name><difficult>1</difficult>
    <bndbox><xmin>10.5</xmin><ymin>20</ymin><xmax>30</xmax><ymax>40</ymax></bndbox></object>
</annotation>
"""


def test_voc_objects_sizes_and_difficult() -> None:
    image = parse_voc("a.xml", VOC.encode())
    assert image.filename == "images/2007_000027.jpg" and (image.width, image.height) == (486, 500)
    assert image.names == ["person", "cat"] and image.object_number.tolist() == [1, 3]
    assert image.xyxy.tolist() == [[174, 101, 349, 351], [10.5, 20, 30, 40]]
    assert image.difficult.tolist() == [False, True]
    assert image.rejected == [(2, "expected a <bndbox> with numbers in <xmin>, <ymin>, <xmax>, <ymax>")]


def test_voc_without_size_has_unknown_size() -> None:
    image = parse_voc("a.xml", b"<annotation><size><width>0</width></size></annotation>")
    assert math.isnan(image.width) and math.isnan(image.height) and image.filename is None


@pytest.mark.parametrize(
    ("where", "text", "expected"),
    [
        ("data.yaml", "names: [car, person]\n", {0: "car", 1: "person"}),
        ("data.yaml", "path: .\nnames:\n  0: car\n  2: person\n", {0: "car", 2: "person"}),
        ("data.yaml", "names:\n  '0': car\n", {0: "car"}),
        ("classes.txt", "car\nperson\n\n", {0: "car", 1: "person"}),
        ("voc.names", "aeroplane\r\nbicycle", {0: "aeroplane", 1: "bicycle"}),
        ("data.yaml", "names: {car: 0}\n", "data.yaml: names: key 'car': expected a class id (0, 1, ...)"),
        ("classes.txt", "car\n\nperson\n", "classes.txt: line 2: empty class name: expected one name a line"),
        ("data.yaml", "- car\n", "data.yaml: expected `names:` as a list of class names or a mapping"),
    ],
)
def test_names_files(where: str, text: str, expected: dict[int, str] | str) -> None:
    if isinstance(expected, str):
        with pytest.raises(DatasetError) as raised:
            parse_names(where, text)
        assert expected in str(raised.value)
    else:
        assert parse_names(where, text) == expected


def test_yaml_errors_name_line_and_column() -> None:
    with pytest.raises(DatasetError) as raised:
        parse_yaml_names("data.yaml", "names: [car\n  - x: y")
    assert str(raised.value).startswith("data.yaml: line 2 column 6: expected valid YAML (expected ','")


def test_class_space_of_ids_and_of_names() -> None:
    yolo = ClassSpace({0: "car", 2: "person"}, "data.yaml", ids_only=True)
    assert (yolo.index("0"), yolo.index("2"), yolo.index("1")) == (0, 1, None)
    assert yolo.missing("1") == "class id 1 has no name in data.yaml (2 names)"
    assert yolo.declared_order is None  # ids with a gap cannot be a probability vector's order
    text = ClassSpace({0: "car", 1: "person"}, "classes.txt", ids_only=False)
    assert (text.index("1"), text.index("bus"), text.index("car"), text.index("7")) == (1, 2, 0, None)
    assert text.names == ["car", "person", "bus"] and text.declared_order == ["car", "person"]
    named = ClassSpace(None, "", ids_only=False)
    assert (named.index("14"), named.index("chair")) == (0, 1)  # no names file: numbers are names


def _gt(class_names: list[str], class_order: list[str] | None, widths: list[float]) -> Loaded:
    n = len(widths)
    dataset = Dataset(
        source="gt.json",
        format="native",
        asset_ids=[f"a{i}" for i in range(n)],
        class_names=class_names,
        boxes=BoxTable.empty(),
        widths=np.array(widths, dtype=np.float64),
        heights=np.array(widths, dtype=np.float64),
    )
    return Loaded(dataset, class_order=class_order)


def _cache(*entries: Any) -> list[Any]:
    return list(entries)


def test_cache_class_is_the_argmax_and_confidence_the_max() -> None:
    entries = _cache(
        {
            "predicted_bounding_boxes": [
                {"x_min": 0.1, "x_max": 0.5, "y_min": 0.2, "y_max": 0.6, "probabilities": [0.38, 0, 0, 0.62]},
                {"x_min": 0.1, "x_max": 0.5, "y_min": 0.2, "y_max": 0.6, "probabilities": [0.5, 0.5, 0, 0]},
            ]
        },
        {"predicted_bounding_boxes": []},
    )
    gt = _gt(["d", "c", "b", "a"], ["a", "b", "c", "d"], [100, 200])
    dataset = read_prediction_cache("p.json", entries, ["[0]", "[1]"], gt, "prediction-cache")
    assert dataset.class_names == ["a", "b", "c", "d"]  # the GT's declared order, not its first-seen one
    assert dataset.boxes.class_id.tolist() == [3, 0]  # a tie goes to the first class
    assert dataset.boxes.confidence.tolist() == [0.62, 0.5]
    assert dataset.boxes.xyxy[0].tolist() == pytest.approx([10, 20, 50, 60])  # GT sizes: pixels
    assert dataset.asset_ids == ["a0", "a1"] and not dataset.normalized


def test_cache_without_declared_classes_uses_sorted_names_and_stays_normalised() -> None:
    box = {"x_min": 0.1, "x_max": 0.5, "y_min": 0.2, "y_max": 0.6, "probabilities": [0, 1]}
    entries = _cache({"predicted_bounding_boxes": [box]})
    dataset = read_prediction_cache("p.json", entries, ["line 1"], _gt(["dog", "cat"], None, [math.nan]), "c")
    assert dataset.class_names == ["cat", "dog"] and dataset.boxes.class_id.tolist() == [1]
    assert dataset.normalized and dataset.boxes.xyxy[0].tolist() == [0.1, 0.2, 0.5, 0.6]


def test_cache_box_without_probabilities_is_skipped() -> None:
    entries = _cache({"predicted_bounding_boxes": [{"x_min": 0.1, "x_max": 0.5, "y_min": 0.2, "y_max": 0.6}]})
    dataset = read_prediction_cache("p.json", entries, ["line 1"], _gt(["cat"], None, [10]), "c")
    assert len(dataset.boxes) == 0 and dataset.skipped_count == 1
    assert dataset.skipped[0].position == "line 1.predicted_bounding_boxes[0]"
    assert dataset.skipped[0].problem == "expected `probabilities`, a list of numbers"


@pytest.mark.parametrize(
    "text",
    [
        "0 0.5 0.5 0.2 0.4\n12 0.1 0.2 0.05 0.1\n",
        "0 0.5 0.5 0.2 0.4 0.9\r\n3 .5 5e-1 0.2 0.4 1\r\n\r\n",
        "  7\t0.5 0.5 0.2 0.4   ",
    ],
)
def test_the_one_call_path_reads_like_the_line_by_line_path(text: str) -> None:
    fast, slow = parse_yolo(text), parse_lines(text, parse_yolo_line)
    assert fast.class_token == slow.class_token and fast.line.tolist() == slow.line.tolist()
    assert fast.xyxy.tolist() == slow.xyxy.tolist()
    np.testing.assert_array_equal(fast.confidence, slow.confidence)  # NaN: the line wrote none
