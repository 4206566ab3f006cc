"""Every format ends in the one dataset builder, so every rule holds for every format alike.

Each writer puts boxes on one 100x100 image `a.jpg` as its format writes them; a box is
pixel `[x_min, y_min, x_max, y_max]` (None: a value that is not a number) and a confidence
(None: not written).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.builders import write_json, write_jsonl, write_tree
from helpers.csv_format import CSV, csv_line, register

from handler.datasets import Loaded, builder, format_names, load_dataset, reading
from handler.errors import DatasetError
from handler.storage.local import LocalSource

Corners = tuple[float | None, float | None, float | None, float | None]
Box = tuple[Corners, float | None]
Writer = Callable[[Path, list[Box]], Loaded]
SIZE = 100
GOOD: Box = ((10, 10, 50, 50), 0.9)


def _load(path: Path, reference: Loaded | None = None) -> Loaded:
    return load_dataset(LocalSource(path), None, reference)


def _native_annotation(box: Box) -> dict[str, Any]:
    (x0, y0, x1, y1), confidence = box
    annotation: dict[str, Any] = {"label": "car", "x_min": x0, "y_min": y0, "x_max": x1, "y_max": y1}
    return annotation if confidence is None else {**annotation, "confidence": confidence}


def _native_asset(boxes: list[Box]) -> dict[str, Any]:
    return {
        "asset_id": "a.jpg",
        "width": SIZE,
        "height": SIZE,
        "annotations": [_native_annotation(b) for b in boxes],
    }


def native(tmp: Path, boxes: list[Box]) -> Loaded:
    return _load(write_json(tmp / "pred.json", {"assets": [_native_asset(boxes)]}))


def native_jsonl(tmp: Path, boxes: list[Box]) -> Loaded:
    return _load(write_jsonl(tmp / "pred.jsonl", [_native_asset(boxes), {"asset_id": "b.jpg"}]))


def _coco_gt(annotations: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "images": [{"id": 1, "file_name": "a.jpg", "width": SIZE, "height": SIZE}],
        "categories": [{"id": 1, "name": "car"}],
        "annotations": annotations,
    }


def _coco_entry(box: Box) -> dict[str, Any]:
    (x0, y0, x1, y1), confidence = box
    xywh = [
        x0,
        y0,
        None if x1 is None or x0 is None else x1 - x0,
        None if y1 is None or y0 is None else y1 - y0,
    ]
    entry: dict[str, Any] = {"image_id": 1, "category_id": 1, "bbox": xywh}
    return entry if confidence is None else {**entry, "score": confidence}


def coco(tmp: Path, boxes: list[Box]) -> Loaded:
    annotations = [{"id": k, **_coco_entry(b)} for k, b in enumerate(boxes)]
    return _load(write_json(tmp / "pred.json", _coco_gt(annotations)))


def coco_results(tmp: Path, boxes: list[Box]) -> Loaded:
    gt = _load(write_json(tmp / "gt.json", _coco_gt([])))
    return _load(write_json(tmp / "results.json", [_coco_entry(b) for b in boxes]), gt)


def _cache_entry(boxes: list[Box]) -> dict[str, Any]:
    def box(corners: Corners, confidence: float | None) -> dict[str, Any]:
        fractions = [None if v is None else v / SIZE for v in corners]
        return {
            **dict(zip(("x_min", "y_min", "x_max", "y_max"), fractions, strict=True)),
            "probabilities": [confidence],
        }

    return {"predicted_bounding_boxes": [box(*b) for b in boxes]}


def _cache_gt(tmp: Path) -> Loaded:
    return _load(write_json(tmp / "gt.json", {"classes": ["car"], "assets": [_native_asset([])]}))


def prediction_cache(tmp: Path, boxes: list[Box]) -> Loaded:
    return _load(write_json(tmp / "cache.json", [_cache_entry(boxes)]), _cache_gt(tmp))


def prediction_cache_jsonl(tmp: Path, boxes: list[Box]) -> Loaded:
    return _load(write_jsonl(tmp / "cache.jsonl", [_cache_entry(boxes)]), _cache_gt(tmp))


def _text(value: float | None) -> str:
    return "nan" if value is None else f"{value:g}"


def _voc_object(box: Box) -> str:
    corners = "".join(
        f"<{t}>{_text(v)}</{t}>" for t, v in zip(("xmin", "ymin", "xmax", "ymax"), box[0], strict=True)
    )
    return f"<object><name>car</name><bndbox>{corners}</bndbox></object>"


def voc(tmp: Path, boxes: list[Box]) -> Loaded:
    size = f"<size><width>{SIZE}</width><height>{SIZE}</height></size>"
    xml = f"<annotation><filename>a.jpg</filename>{size}{''.join(_voc_object(b) for b in boxes)}</annotation>"
    return _load(write_tree(tmp / "voc", {"a.xml": xml}))


SIZES = json.dumps({"a.jpg": [SIZE, SIZE]})


def _yolo_line(box: Box) -> str:
    corners, confidence = box
    x0, y0, x1, y1 = (np.nan if v is None else v for v in corners)
    values = [(x0 + x1) / 2 / SIZE, (y0 + y1) / 2 / SIZE, (x1 - x0) / SIZE, (y1 - y0) / SIZE]
    tail = "" if confidence is None else f" {confidence:g}"
    return "0 " + " ".join(_text(v) for v in values) + tail + "\n"


def yolo(tmp: Path, boxes: list[Box]) -> Loaded:
    files = {"classes.txt": "car\n", "sizes.json": SIZES, "a.txt": "".join(_yolo_line(b) for b in boxes)}
    return _load(write_tree(tmp / "yolo", files))


def _quad(box: Box, scale: float) -> list[str]:
    """A box's corners clockwise from its top-left, as YOLO OBB and DOTA write them."""
    x0, y0, x1, y1 = box[0]
    return [_text(None if v is None else v / scale) for v in (x0, y0, x1, y0, x1, y1, x0, y1)]


def yolo_obb(tmp: Path, boxes: list[Box]) -> Loaded:
    def line(box: Box) -> str:
        tail = [] if box[1] is None else [f"{box[1]:g}"]
        return " ".join(["0", *_quad(box, SIZE), *tail]) + "\n"

    files = {"classes.txt": "car\n", "sizes.json": SIZES, "a.txt": "".join(map(line, boxes))}
    return _load(write_tree(tmp / "obb", files))


def yolo_seg(tmp: Path, boxes: list[Box]) -> Loaded:
    """A box as a polygon of five points (its corners and its top edge's middle: four points
    alone are a YOLO OBB line), normalised; its mask is the box's pixels."""

    def line(box: Box) -> str:
        x0, y0, x1, _ = box[0]
        middle_x = None if x0 is None or x1 is None else (x0 + x1) / 2
        middle = [_text(None if v is None else v / SIZE) for v in (middle_x, y0)]
        tail = [] if box[1] is None else [f"{box[1]:g}"]
        return " ".join(["0", *_quad(box, SIZE)[:2], *middle, *_quad(box, SIZE)[2:], *tail]) + "\n"

    files = {"classes.txt": "car\n", "sizes.json": SIZES, "a.txt": "".join(map(line, boxes))}
    return _load(write_tree(tmp / "seg", files))


def dota(tmp: Path, boxes: list[Box]) -> Loaded:
    """DOTA labelTxt: pixel corners, a class name and `difficult`; no confidence."""
    lines = "".join(" ".join([*_quad(box, 1), "car", "0"]) + "\n" for box in boxes)
    files = {"sizes.json": SIZES, "a.txt": "imagesource:GoogleEarth\ngsd:0.15\n" + lines}
    return _load(write_tree(tmp / "dota", files))


def _cartucho_line(box: Box) -> str:
    corners, confidence = box
    head = "car" if confidence is None else f"car {confidence:g}"
    return head + " " + " ".join(_text(v) for v in corners) + "\n"


def cartucho(tmp: Path, boxes: list[Box]) -> Loaded:
    files = {"sizes.json": SIZES, "a.txt": "".join(_cartucho_line(b) for b in boxes)}
    return _load(write_tree(tmp / "cartucho", files))


def csv(tmp: Path, boxes: list[Box]) -> Loaded:
    """The throwaway format of tests/helpers/csv_format.py, registered for every test here."""

    def line(box: Box) -> str:
        corners, confidence = box
        values = [_text(v) for v in corners] + ([] if confidence is None else [f"{confidence:g}"])
        return csv_line("a.jpg", (SIZE, SIZE), "car", values)

    return _load(write_tree(tmp / "csv", {"a.csv": "".join(line(b) for b in boxes)}))


def _label_studio_region(box: Box) -> dict[str, Any]:
    (x0, y0, x1, y1), confidence = box
    percent = [None if v is None else 100 * v / SIZE for v in (x0, y0)]
    extent = [None if a is None or b is None else 100 * (b - a) / SIZE for a, b in ((x0, x1), (y0, y1))]
    value = dict(zip(("x", "y", "width", "height"), percent + extent, strict=True))
    region: dict[str, Any] = {
        "type": "rectanglelabels",
        "original_width": SIZE,
        "original_height": SIZE,
        "value": {**value, "rotation": 0, "rectanglelabels": ["car"]},
    }
    return region if confidence is None else {**region, "score": confidence}


def label_studio(tmp: Path, boxes: list[Box]) -> Loaded:
    task = {
        "data": {"image": "/data/upload/1/a.jpg"},
        "annotations": [{"result": [_label_studio_region(b) for b in boxes]}],
    }
    return _load(write_json(tmp / "export.json", [task]))


def label_studio_min(tmp: Path, boxes: list[Box]) -> Loaded:
    """JSON-MIN writes a region's value with the image size beside it, and no score."""
    regions = [
        {**r["value"], "original_width": SIZE, "original_height": SIZE}
        for r in map(_label_studio_region, boxes)
    ]
    record = {"image": "/data/upload/1/a.jpg", "id": 1, "label": regions, "annotator": 1, "annotation_id": 1}
    return _load(write_json(tmp / "export-min.json", [record]))


def _cvat_box(box: Box) -> str:
    corners, confidence = box
    values = " ".join(f"{t}='{_text(v)}'" for t, v in zip(("xtl", "ytl", "xbr", "ybr"), corners, strict=True))
    score = "" if confidence is None else f"<attribute name='score'>{_text(confidence)}</attribute>"
    return f"<box label='car' occluded='0' {values}>{score}</box>"


def cvat(tmp: Path, boxes: list[Box]) -> Loaded:
    image = (
        f"<image id='0' name='a.jpg' width='{SIZE}' height='{SIZE}'>{''.join(map(_cvat_box, boxes))}</image>"
    )
    return _load(
        write_tree(
            tmp / "cvat", {"annotations.xml": f"<annotations><version>1.1</version>{image}</annotations>"}
        )
    )


WRITERS: dict[str, Writer] = {
    "native": native,
    "native-jsonl": native_jsonl,
    "coco": coco,
    "coco-results": coco_results,
    "prediction-cache": prediction_cache,
    "prediction-cache-jsonl": prediction_cache_jsonl,
    "voc": voc,
    "yolo": yolo,
    "yolo-obb": yolo_obb,
    "yolo-seg": yolo_seg,
    "dota": dota,
    "cartucho": cartucho,
    "label-studio": label_studio,
    "label-studio-min": label_studio_min,
    "cvat": cvat,
    CSV.name: csv,
}
WITHOUT_CONFIDENCE = ("voc", "label-studio-min", "dota")
# Corners (and polygons) draw the same rectangle in either order: a box has no inverted form in them.
CORNERS = ("yolo-obb", "yolo-seg", "dota")
WITH_CONFIDENCE = [name for name in WRITERS if name not in WITHOUT_CONFIDENCE]
CONFIDENCE_OPTIONAL = [name for name in WRITERS if not name.startswith("prediction-cache")]


@pytest.fixture(autouse=True)
def _throwaway_format_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new format is held to every rule here: the throwaway one shows it, registered like any."""
    register(monkeypatch)


def test_every_registered_format_is_covered() -> None:
    """A format added to the registry without a writer here fails this test, so it is never
    left out of the rules below (each is parametrised over the writers)."""
    assert sorted(WRITERS) == sorted(format_names())


def _skips_one(name: str, tmp: Path, bad: Box) -> str:
    loaded = WRITERS[name](tmp, [GOOD, bad])
    dataset = loaded.dataset
    assert dataset.format == name
    assert (len(dataset.boxes), dataset.skipped_count, len(dataset.skipped)) == (1, 1, 1)
    return dataset.skipped[0].problem


@pytest.mark.parametrize("name", list(WRITERS))
def test_a_box_wholly_outside_its_image_is_skipped_and_counted(name: str, tmp_path: Path) -> None:
    problem = _skips_one(name, tmp_path, ((200, 200, 210, 210), 0.9))
    assert "lies entirely outside" in problem


@pytest.mark.parametrize("name", WITH_CONFIDENCE)
@pytest.mark.parametrize("confidence", [1.5, -3.0])
def test_a_confidence_outside_0_1_is_skipped_and_counted(
    name: str, confidence: float, tmp_path: Path
) -> None:
    problem = _skips_one(name, tmp_path, ((10, 10, 50, 50), confidence))
    assert f"{confidence:g}" in problem


@pytest.mark.parametrize("name", list(WRITERS))
@pytest.mark.parametrize("corners", [(50, 10, 10, 50), (10, 10, None, 50)], ids=["inverted", "not-a-number"])
def test_an_inverted_or_non_finite_box_is_skipped_and_counted(
    name: str, corners: Corners, tmp_path: Path
) -> None:
    if name in CORNERS and corners[2] is not None:
        dataset = WRITERS[name](tmp_path, [GOOD, (corners, 0.9)]).dataset
        assert dataset.skipped_count == 0 and dataset.boxes.xyxy[1].tolist() == [10, 10, 50, 50]
        return
    _skips_one(name, tmp_path, (corners, 0.9))


@pytest.mark.parametrize("name", CONFIDENCE_OPTIONAL)
def test_a_missing_confidence_is_fully_confident(name: str, tmp_path: Path) -> None:
    dataset = WRITERS[name](tmp_path, [((10, 10, 50, 50), None), GOOD]).dataset
    assert dataset.skipped_count == 0
    assert dataset.boxes.confidence.tolist() == ([1.0, 1.0] if name in WITHOUT_CONFIDENCE else [1.0, 0.9])


def test_workers_read_shard_files_in_one_json_lines_format() -> None:
    assert [f.kind for f in reading.FORMATS if f.reads_shards] == ["jsonl"]
    assert reading.shards_readable(None) and reading.shards_readable(reading.shard_format().name)


# The writers above that write a box as a position and a size (COCO's [x, y, w, h], YOLO's
# cx cy w h): a box with its corners swapped reaches the reader as a negative size, and the reader
# names it in those terms; every other writer writes corners.
WRITES_SIZES = (coco, coco_results, yolo, label_studio, label_studio_min)


@pytest.mark.parametrize("name", [name for name in WRITERS if name not in CORNERS])
def test_the_builder_names_a_bad_box_in_the_layout_written(name: str, tmp_path: Path) -> None:
    dataset = WRITERS[name](tmp_path, [GOOD, ((50, 10, 10, 50), 0.9)]).dataset
    inverted = "negative width or height" if WRITERS[name] in WRITES_SIZES else "x_max < x_min"
    assert dataset.skip_reasons == {inverted: 1}


@pytest.mark.parametrize("name", ["yolo", "cartucho", "cvat", CSV.name])
def test_a_confidence_that_is_not_a_number_is_skipped_as_not_finite(name: str, tmp_path: Path) -> None:
    """As native skips a confidence that is not a number (JSON cannot write a NaN; text can)."""
    dataset = WRITERS[name](tmp_path, [GOOD, ((10, 10, 50, 50), float("nan"))]).dataset
    assert dataset.skip_reasons == {"confidence not finite": 1}
    assert dataset.skipped[0].problem == "confidence is not a finite number"


def test_class_names_come_from_rows_whose_box_is_skipped(tmp_path: Path) -> None:
    """A line that is not a box takes a class name but no box number (its file's boxes are
    numbered as before the builder alone judged boxes: outcome lines keep their indices)."""
    files = {"sizes.json": SIZES, "a.txt": "bus 50 10 10 50\ncar 10 10 50 50\n"}
    dataset = _load(write_tree(tmp_path / "cartucho", files)).dataset
    assert dataset.class_names == ["bus", "car"] and dataset.skipped_count == 1
    assert dataset.boxes.source_index.tolist() == [0]


def test_an_unnamed_class_id_is_the_error_even_on_a_bad_box(tmp_path: Path) -> None:
    files = {"classes.txt": "car\n", "sizes.json": SIZES, "a.txt": "0 0.3 0.3 0.4 0.4\n7 0.5 0.5 -0.1 0.2\n"}
    with pytest.raises(DatasetError, match=r"a\.txt: line 2: class id 7 has no name"):
        _load(write_tree(tmp_path / "yolo", files))


# One defect of each kind the builder or a reader names, between good rows (COCO: `[x, y, w, h]`).
_MIXED_COCO = (
    ({"image_id": 9, "bbox": [1, 1, 5, 5], "score": 0.5}, "image_id 9 is not in the images"),
    ({"category_id": 7, "bbox": [1, 1, 5, 5], "score": 0.5}, "category_id 7 is not in the categories"),
    ({"bbox": [1, None, 5, 5], "score": 0.5}, "a box value is not a finite number"),
    ({"bbox": [1, 1, -5, 5], "score": 0.5}, "negative width or height"),
    ({"bbox": [1, 1, 5, 5], "score": "high"}, "confidence is not a finite number"),
    ({"bbox": [1, 1, 5, 5], "score": 1.5}, "confidence 1.5 is outside [0, 1]"),
    (
        {"image_id": 2, "bbox": [200, 1, 5, 5], "score": 0.5},
        "box [200, 1, 205, 6] lies entirely outside its 100x50 image",
    ),
    ({"bbox": [1, 1, 5, 5], "score": 0.5, "iscrowd": 1}, None),  # a crowd region: left out, not skipped
)


@pytest.mark.parametrize("block", [builder.BLOCK, 3], ids=["one-block", "blocks-of-3"])
def test_mixed_bad_rows_are_listed_counted_and_numbered_as_each_rule_names_them(
    block: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every kind of bad row, four times over between good rows: the first `LISTED_SKIPS` skips in
    row order with their own words, the count by reason in its order, the crowd rows apart; the
    same whether the rules see the rows at once or a few at a time."""
    monkeypatch.setattr(builder, "BLOCK", block)
    good = {"image_id": 1, "category_id": 1, "bbox": [1, 1, 5, 5], "score": 0.5}
    entries = [entry for _ in range(4) for bad, _ in _MIXED_COCO for entry in (good, {**good, **bad})]
    document = {
        "images": [
            {"id": 1, "file_name": "a.jpg", "width": SIZE, "height": SIZE},
            {"id": 2, "file_name": "b.jpg", "width": SIZE, "height": SIZE // 2},
        ],
        "categories": [{"id": 1, "name": "car"}],
        "annotations": [{"id": k, **entry} for k, entry in enumerate(entries)],
    }
    dataset = _load(write_json(tmp_path / "gt.json", document)).dataset
    problems = [problem for _ in range(4) for _, problem in _MIXED_COCO]  # of rows 1, 3, 5, ...
    skipped = [(f"annotations[{2 * k + 1}]", p) for k, p in enumerate(problems) if p is not None]
    assert [(s.position, s.problem) for s in dataset.skipped] == skipped[:20]
    assert (dataset.skipped_count, dataset.crowd_excluded, len(dataset.boxes)) == (28, 4, 32)
    assert list(dataset.skip_reasons.items()) == [
        ("confidence not finite", 4),
        ("confidence out of range", 4),
        ("coordinate not finite", 4),
        ("negative width or height", 4),
        ("outside image", 4),
        ("image not in the images", 4),
        ("class not in the categories", 4),
    ]
    assert dataset.boxes.source_index.tolist() == list(range(0, len(entries), 2))


def test_mixed_bad_lines_of_a_folder_are_numbered_among_the_boxes(tmp_path: Path) -> None:
    """A line that is not a box takes no number; one that is a box but breaks a later rule does."""
    lines = [
        "car 10 10 50 50",
        "car 50 10 10 50",
        "car 1.5 10 10 50 50",
        "car nan 10 10 50 50",
        "car 200 10 250 50",
        "car 10 nan 50 50",
        "car 10 10 50 50",
        "car 10 60 50 50",
    ]
    files = {"sizes.json": SIZES, "a.txt": "\n".join(lines) + "\n"}
    dataset = _load(write_tree(tmp_path / "cartucho", files)).dataset
    assert [(s.position, s.problem) for s in dataset.skipped] == [
        ("a.txt line 2", "x_max < x_min"),
        ("a.txt line 3", "confidence 1.5 is outside [0, 1]"),
        ("a.txt line 4", "confidence is not a finite number"),
        ("a.txt line 5", "box [200, 10, 250, 50] lies entirely outside its 100x100 image"),
        ("a.txt line 6", "y_min is not a finite number"),
        ("a.txt line 8", "y_max < y_min"),
    ]
    assert list(dataset.skip_reasons.items()) == [
        ("confidence not finite", 1),
        ("confidence out of range", 1),
        ("coordinate not finite", 1),
        ("outside image", 1),
        ("x_max < x_min", 1),
        ("y_max < y_min", 1),
    ]
    assert dataset.boxes.source_index.tolist() == [0, 3]


def test_mixed_bad_native_annotations_are_named_in_the_schema_words(tmp_path: Path) -> None:
    def annotation(**changed: Any) -> dict[str, Any]:
        return {"label": "car", "x_min": 10, "y_min": 10, "x_max": 50, "y_max": 50, **changed}

    annotations = [
        annotation(),
        annotation(label=""),
        annotation(x_max=None),
        annotation(confidence=1.5),
        annotation(confidence="x"),
        annotation(x_min=200, x_max=300),
        annotation(y_max=5),
        annotation(normalized=True, x_min=2, x_max=3, y_min=0.1, y_max=0.2),
        annotation(),
    ]
    document = {"assets": [{"asset_id": "a.jpg", "width": SIZE, "height": SIZE, "annotations": annotations}]}
    dataset = _load(write_json(tmp_path / "pred.json", document)).dataset
    assert [s.problem for s in dataset.skipped] == [
        "'' should be non-empty",
        "None is not of type 'number'",
        "1.5 is greater than the maximum of 1",
        "'x' is not of type 'number'",
        "box [200, 10, 300, 50] lies entirely outside its 100x100 image",
        "y_max < y_min",
        "box [2, 0.1, 3, 0.2] lies entirely outside the 0-1 normalised image",
    ]
    assert list(dataset.skip_reasons.items()) == [
        ("confidence not finite", 1),
        ("confidence out of range", 1),
        ("coordinate not finite", 1),
        ("no label", 1),
        ("outside image", 2),
        ("y_max < y_min", 1),
    ]
    assert dataset.boxes.source_index.tolist() == [0, 8]
