"""Folder formats: which files are labels, which images are present, where class names and
sizes come from, detection and forcing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.builders import write_tree
from helpers.csv_format import register

from handler.datasets import Loaded, format_names, load_dataset, pair_datasets, reading
from handler.engine import evaluate
from handler.errors import DatasetError
from handler.inputs import DEFAULT_THRESHOLDS
from handler.storage.local import LocalSource

CAR = "0 0.3 0.3 0.2 0.2\n"  # x 20-40, y 16-32 in a 100x80 image
NATIVE_GT = {
    "assets": [
        {
            "asset_id": f"{name}.jpg",
            "width": 100,
            "height": 80,
            "annotations": [{"label": "car", "x_min": 20, "y_min": 16, "x_max": 40, "y_max": 32}],
        }
        for name in "abcd"
    ]
}


def load(path: Path, reference: Loaded | None = None, fmt: str | None = None) -> Loaded:
    return load_dataset(LocalSource(path), fmt, reference)


def native_gt(tmp_path: Path) -> Loaded:
    return load(write_tree(tmp_path / "gt", {"gt.json": json.dumps(NATIVE_GT)}) / "gt.json")


def counts(gt: Loaded, pred: Loaded) -> dict[str, int]:
    paired = pair_datasets(gt.dataset, pred.dataset)
    tally = evaluate(paired.gt, paired.pred, len(paired.asset_ids), DEFAULT_THRESHOLDS).tally
    return {**tally.count_dict(), "gt_only": paired.gt_only_images, "pred_only": paired.pred_only_images}


def test_an_empty_txt_a_missing_txt_and_an_image_without_txt_are_images_without_predictions(
    tmp_path: Path,
) -> None:
    gt = native_gt(tmp_path)
    files: dict[str, str | bytes] = {"classes.txt": "car\n", "a.txt": CAR, "b.txt": "", "c.jpg": b""}
    pred = load(write_tree(tmp_path / "pred", files), gt)
    # d has no label file: the GT lists it, and a YOLO tool writes no file for an image it found nothing in
    assert sorted(pred.dataset.asset_ids) == ["a", "b", "c.jpg", "d.jpg"]
    assert pred.dataset.unlabelled_images == 1
    result = counts(gt, pred)
    # a: matched; b (empty .txt), c (an image without .txt) and d (no file) are scored: their GT is missed.
    assert (result["correct"], result["false_negative"], result["gt_only"]) == (1, 3, 0)


def test_side_files_are_not_label_files(tmp_path: Path) -> None:
    files = {
        "obj.names": "car\n",
        "obj.data": "classes = 1\nnames = data/obj.names\n",
        "train.txt": "data/obj_train_data/a.jpg\n",
        "README.dataset.txt": "# Cars > 2023-05-01\nProvided by Roboflow\n",
        "obj_train_data/a.txt": CAR,
        ".DS_Store": b"\x00\x01",
        "__MACOSX/obj_train_data/._a.txt": b"\x00\x05\x16\x07",
    }
    dataset = load(write_tree(tmp_path / "yolo", files)).dataset
    assert (dataset.format, dataset.asset_ids, dataset.class_names) == ("yolo", ["a"], ["car"])
    assert dataset.skipped_count == 0 and len(dataset.boxes) == 1


def test_names_from_a_yaml_mapping_in_an_ultralytics_layout(tmp_path: Path) -> None:
    files = {
        "dataset.yaml": "path: .\ntrain: images/train\nnames:\n  0: car\n  2: person\n",
        "images/train/a.jpg": b"",
        "labels/train/a.txt": "2 0.5 0.5 0.2 0.2\n0 0.3 0.3 0.2 0.2 0.9\n",
    }
    dataset = load(write_tree(tmp_path / "yolo", files)).dataset
    assert dataset.class_names == ["car", "person"] and dataset.boxes.class_id.tolist() == [1, 0]
    assert dataset.asset_ids == ["a.jpg"] and dataset.boxes.confidence.tolist() == [1.0, 0.9]


def test_the_shallowest_names_file_wins(tmp_path: Path) -> None:
    files = {"data.yaml": "names: [car]\n", "labels/classes.txt": "bus\n", "labels/a.txt": CAR}
    assert load(write_tree(tmp_path / "yolo", files)).dataset.class_names == ["car"]


def test_predictions_without_names_take_the_yolo_gt_names(tmp_path: Path) -> None:
    gt = load(write_tree(tmp_path / "gt", {"data.yaml": "names: [car, bus]\n", "a.txt": CAR}))
    pred = load(write_tree(tmp_path / "pred", {"labels/a.txt": "0 0.3 0.3 0.2 0.2 0.8\n"}), gt)
    assert pred.dataset.class_names == ["car", "bus"]
    assert counts(gt, pred)["correct"] == 1


def test_yolo_predictions_meet_pixels_through_the_gt_sizes(tmp_path: Path) -> None:
    pred = load(write_tree(tmp_path / "pred", {"classes.txt": "car\n", "a.txt": CAR}), native_gt(tmp_path))
    assert pred.dataset.normalized
    assert counts(native_gt(tmp_path), pred)["correct"] == 1


def test_a_normalised_gt_without_sizes_names_the_sizes_file(tmp_path: Path) -> None:
    gt = load(write_tree(tmp_path / "gt", {"classes.txt": "car\n", "a.txt": CAR}))
    pred = load(write_tree(tmp_path / "pred", {"a.txt": "car 20 16 40 32\n"}), gt)
    with pytest.raises(DatasetError, match=r"a sizes\.json \{image name: \[width, height\]\} in it"):
        pair_datasets(gt.dataset, pred.dataset)
    write_tree(tmp_path / "gt", {"sizes.json": json.dumps({"a.jpg": [100, 80]})})
    gt = load(tmp_path / "gt")
    assert not gt.dataset.normalized and counts(gt, load(tmp_path / "pred", gt))["correct"] == 1


def test_voc_keeps_and_flags_difficult_objects(tmp_path: Path) -> None:
    xml = (
        "<annotation><filename>a.png</filename><size><width>100</width><height>80</height></size>"
        "<object><name>car</name>"
        "<bndbox><xmin>20</xmin><ymin>16</ymin><xmax>40</xmax><ymax>32</ymax></bndbox></object>"
        "<object><name>car</name><difficult>1</difficult>"
        "<bndbox><xmin>60</xmin><ymin>16</ymin><xmax>80</xmax><ymax>32</ymax></bndbox></object></annotation>"
    )
    files = {"Annotations/x.xml": xml, "labelmap.txt": "car:::\n"}  # CVAT's VOC export layout
    dataset = load(write_tree(tmp_path / "voc", files)).dataset
    assert dataset.format == "voc" and dataset.asset_ids == ["a.png"]
    assert dataset.boxes.difficult.tolist() == [False, True] and dataset.widths.tolist() == [100]


def test_a_single_label_file_is_a_dataset_of_one_image(tmp_path: Path) -> None:
    xml = "<annotation><size><width>100</width><height>80</height></size></annotation>"
    voc = load(write_tree(tmp_path, {"a.xml": xml}) / "a.xml").dataset
    assert (voc.format, voc.asset_ids) == ("voc", ["a"])
    text = load(write_tree(tmp_path, {"b.txt": "car 0.9 20 16 40 32\n"}) / "b.txt").dataset
    assert (text.format, text.asset_ids, text.class_names) == ("cartucho", ["b"], ["car"])


def test_a_class_on_one_side_only_is_fine(tmp_path: Path) -> None:
    gt = load(write_tree(tmp_path / "gt", {"a.txt": "car 20 16 40 32\n"}))
    pred = load(write_tree(tmp_path / "pred", {"a.txt": "bus 0.9 20 16 40 32\n"}), gt)
    assert counts(gt, pred)["class_confused"] == 1


def test_a_forced_format_reads_what_detection_would_not(tmp_path: Path) -> None:
    folder = write_tree(tmp_path / "pred", {"classes.txt": "car\n", "a.txt": "0 0.9 0.1 0.2 0.3 0.4\n"})
    assert load(folder).dataset.format == "yolo"
    forced = load(folder, fmt="cartucho").dataset  # `cls conf x1 y1 x2 y2`, in pixels
    assert forced.class_names == ["car"] and forced.boxes.xyxy.tolist() == [[0.1, 0.2, 0.3, 0.4]]
    assert forced.boxes.confidence.tolist() == [0.9]


def folder_formats() -> str:
    """The folder formats as messages list them: every registered one, in the registry's order."""
    return ", ".join(f.name for f in reading.FORMATS if f.kind == "folder")


@pytest.mark.parametrize("throwaway", [False, True], ids=["registry", "with-a-new-folder-format"])
def test_a_json_format_forced_on_a_folder_names_the_folder_formats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, throwaway: bool
) -> None:
    if throwaway:
        register(monkeypatch)
    folder = write_tree(tmp_path / "pred", {"a.txt": CAR})
    with pytest.raises(DatasetError) as raised:
        load(folder, fmt="coco")
    assert str(raised.value).endswith(f"format 'coco' cannot read this; expected one of {folder_formats()}")
    assert ("csv" in folder_formats()) == throwaway


def test_every_format_has_a_name_for_the_cli() -> None:
    names = format_names()
    assert len(names) == len(set(names))
    expected = {"yolo", "voc", "cartucho", "prediction-cache", "prediction-cache-jsonl", "coco", "native"}
    assert expected <= set(names)


@pytest.mark.parametrize(
    ("fmt", "message"),
    [
        ("yolo", "no yolo label files: expected `class x_center y_center width height [confidence]` in .txt"),
        ("voc", "no .xml files: expected Pascal VOC <annotation> files, one per image"),
    ],
)
def test_a_folder_format_forced_on_a_file_of_another_kind_says_so(
    tmp_path: Path, fmt: str, message: str
) -> None:
    path = write_tree(tmp_path, {"pred.json": json.dumps(NATIVE_GT)}) / "pred.json"
    with pytest.raises(DatasetError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load(path, fmt=fmt)


def test_a_json_format_forced_on_json_lines_reads_its_lines_variant(tmp_path: Path) -> None:
    gt = native_gt(tmp_path)
    box = {"x_min": 0.2, "y_min": 0.2, "x_max": 0.4, "y_max": 0.4, "probabilities": [1.0]}
    lines = [{"predicted_bounding_boxes": [box]}] + [{"predicted_bounding_boxes": []}] * 3
    path = write_tree(tmp_path, {"cache.jsonl": "".join(json.dumps(line) + "\n" for line in lines)})
    pred = load(path / "cache.jsonl", gt, fmt="prediction-cache").dataset
    assert pred.format == "prediction-cache-jsonl" and pred.boxes.xyxy.tolist() == [[20, 16, 40, 32]]


@pytest.mark.parametrize("fmt", [None, "native", "prediction-cache-jsonl"])
def test_an_empty_json_lines_file_says_it_has_no_records(tmp_path: Path, fmt: str | None) -> None:
    path = write_tree(tmp_path, {"pred.jsonl": "\n"}) / "pred.jsonl"
    with pytest.raises(DatasetError) as raised:
        load(path, fmt=fmt)
    assert str(raised.value) == f"{path}: no records: expected JSON Lines, one record a line"


def test_a_folder_holding_one_json_dataset_reads_that_file(tmp_path: Path) -> None:
    """A dataset id resolves to `datasets/<id>/`: one dataset file, maybe images beside it."""
    folder = write_tree(
        tmp_path / "ds_01H", {"gt.json": json.dumps(NATIVE_GT), "images/a.jpg": b"", "notes.txt": "x"}
    )
    assert load(folder).dataset.format == "native" and load(folder, fmt="native").dataset.image_count == 4
    write_tree(folder, {"other.json": "[]"})
    with pytest.raises(DatasetError, match=rf"tried {folder_formats()} and one \.json/\.jsonl file"):
        load(folder)


def test_a_folder_of_jsonl_shards_is_one_dataset_in_name_order(tmp_path: Path) -> None:
    box = {"label": "car", "x_min": 1, "y_min": 1, "x_max": 5, "y_max": 5}
    bad = {"label": "car", "x_min": 5, "y_min": 1, "x_max": 1, "y_max": 5}
    shard = '{{"asset_id": "{}", "annotations": [{}]}}\n'
    root = write_tree(
        tmp_path / "ds",
        {
            "part-0002.jsonl": shard.format("b", json.dumps(bad)) + "\n" + shard.format("c", json.dumps(box)),
            "part-0001.jsonl": shard.format("a", json.dumps(box)),
        },
    )
    dataset = load(root).dataset
    assert dataset.format == "native-jsonl" and dataset.asset_ids == ["a", "b", "c"]
    assert len(dataset.boxes) == 2
    assert [(s.position, s.problem) for s in dataset.skipped] == [
        ("part-0002.jsonl line 1.annotations[0]", "x_max < x_min")
    ]
    assert load(root, fmt="native").dataset.asset_ids == ["a", "b", "c"]
