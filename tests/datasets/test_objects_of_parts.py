"""An object written as a box beside the parts of its outline, as the tools' converters write a
COCO object: Label Studio (label-studio-sdk's COCO import: a rectangle, then a polygon per part,
linked by order and place only) and CVAT (datumaro: a `group_id` shared by the box and the
parts). Read as one object whose mask is pycocotools' merge of its parts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from pycocotools import mask as coco_mask

from handler.boxes import Dataset
from handler.datasets import load_dataset
from handler.datasets.box_parts import objects_of
from handler.datasets.read_options import ReadOptions
from handler.readings.sides import read_as
from handler.storage import open_source

WIDTH, HEIGHT = 40, 30
# Object A: two parts; object B (the same label) lies within A's box, written after A.
A_PARTS = ([2.0, 2.0, 12.0, 2.0, 12.0, 12.0], [20.0, 15.0, 30.0, 15.0, 30.0, 25.0, 20.0, 25.0])
B_PART = [5.0, 14.0, 9.0, 14.0, 9.0, 20.0]


def bounds(*parts: list[float]) -> list[float]:
    points = np.concatenate([np.reshape(p, (-1, 2)) for p in parts])
    return [*points.min(axis=0).tolist(), *points.max(axis=0).tolist()]


def merged(*parts: list[float]) -> dict[str, Any]:
    rle: dict[str, Any] = coco_mask.merge(coco_mask.frPyObjects(list(parts), HEIGHT, WIDTH))
    return rle


def masks_of(dataset: Dataset) -> list[dict[str, Any]]:
    runs = dataset.boxes.mask_runs
    return [
        coco_mask.frPyObjects({"counts": runs[[row]].counts.tolist(), "size": [HEIGHT, WIDTH]}, HEIGHT, WIDTH)
        for row in range(len(dataset.boxes))
    ]


def test_a_box_takes_the_run_of_parts_that_makes_it_up_even_with_another_object_inside() -> None:
    boxes = [bounds(*A_PARTS), bounds(B_PART)]
    parts = [bounds(A_PARTS[0]), bounds(A_PARTS[1]), bounds(B_PART)]
    # JSON-MIN's order: the boxes, then the parts; a lone part and a lone box of another group
    xyxy = np.array([*boxes, *parts, bounds(B_PART), [0.0, 0.0, 5.0, 5.0]])
    group = np.array([0, 0, 0, 0, 0, 1, 2])
    is_box = np.array([True, True, False, False, False, False, True])
    owner = objects_of(group, is_box, ~is_box, xyxy)
    assert owner.tolist() == [-1, -1, 2, 2, 4, 5, 6]


def test_a_part_no_box_is_made_of_stays_an_object() -> None:
    xyxy = np.array([[0.0, 0.0, 10.0, 10.0], [1.0, 1.0, 9.0, 9.0]])  # the part is within, not the box
    owner = objects_of(np.zeros(2, dtype=np.int64), np.array([True, False]), np.array([False, True]), xyxy)
    assert owner.tolist() == [0, 1]


def test_a_lone_part_before_an_object_s_parts_is_passed_over() -> None:
    """Not the converter's plain order: the box still takes the run after the lone part."""
    xyxy = np.array(
        [[0.0, 0.0, 10.0, 10.0], [20.0, 20.0, 25.0, 25.0], [0.0, 0.0, 6.0, 10.0], [4.0, 2.0, 10.0, 8.0]]
    )
    is_box = np.array([True, False, False, False])
    owner = objects_of(np.zeros(4, dtype=np.int64), is_box, ~is_box, xyxy)
    assert owner.tolist() == [-1, 1, 2, 2]


def label_studio_region(kind: str, label: str, value: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": kind,
        "original_width": WIDTH,
        "original_height": HEIGHT,
        "value": {**value, kind: [label]},
    }


def rectangle(label: str, xyxy: list[float]) -> dict[str, Any]:
    x0, y0, x1, y1 = xyxy
    percent = {"x": 100 * x0 / WIDTH, "y": 100 * y0 / HEIGHT}
    size = {"width": 100 * (x1 - x0) / WIDTH, "height": 100 * (y1 - y0) / HEIGHT}
    return label_studio_region("rectanglelabels", label, {**percent, **size})


def polygon(label: str, flat: list[float]) -> dict[str, Any]:
    points = [[100 * x / WIDTH, 100 * y / HEIGHT] for x, y in np.reshape(flat, (-1, 2)).tolist()]
    return label_studio_region("polygonlabels", label, {"points": points})


def test_label_studio_sdk_s_coco_import_of_two_objects_reads_as_two_masks(tmp_path: Path) -> None:
    result = [
        rectangle("cat", bounds(*A_PARTS)),
        *(polygon("cat", part) for part in A_PARTS),
        rectangle("cat", bounds(B_PART)),
        polygon("cat", B_PART),
    ]
    export = tmp_path / "export.json"
    export.write_text(
        json.dumps([{"data": {"image": "/data/upload/1/a.jpg"}, "annotations": [{"result": result}]}])
    )
    dataset = load_dataset(open_source(str(export)), None, None).dataset
    assert len(dataset.boxes) == 2 and dataset.boxes.has_masks and dataset.skipped_count == 0
    expected = [merged(*A_PARTS), merged(B_PART)]
    ious = coco_mask.iou(masks_of(dataset), expected, [0, 0])
    np.testing.assert_array_equal(np.diag(ious), [1.0, 1.0])


def cvat_file(tmp_path: Path, shapes: str) -> Path:
    path = tmp_path / "annotations.xml"
    path.write_text(
        "<annotations><meta><task><labels><label><name>cat</name></label><label><name>dog</name></label>"
        f'</labels></task></meta><image id="0" name="a.jpg" width="{WIDTH}" height="{HEIGHT}">'
        f"{shapes}</image></annotations>"
    )
    return path


def cvat_polygon(label: str, flat: list[float], group: int, crowd: bool = False) -> str:
    points = ";".join(f"{x},{y}" for x, y in np.reshape(flat, (-1, 2)).tolist())
    attribute = '<attribute name="is_crowd">true</attribute>' if crowd else ""
    return f'<polygon label="{label}" points="{points}" group_id="{group}">{attribute}</polygon>'


def cvat_box(label: str, xyxy: list[float], group: int) -> str:
    corners = " ".join(f'{k}="{v}"' for k, v in zip(("xtl", "ytl", "xbr", "ybr"), xyxy, strict=True))
    return f'<box label="{label}" {corners} group_id="{group}"></box>'


def test_a_cvat_group_of_a_box_and_polygons_is_one_object_and_is_crowd_is_left_out(tmp_path: Path) -> None:
    shapes = (
        cvat_box("cat", bounds(*A_PARTS), 7)
        + "".join(cvat_polygon("cat", part, 7) for part in A_PARTS)
        + cvat_polygon("cat", B_PART, 8, crowd=True)
        + cvat_box("cat", bounds(B_PART), 8)
        + cvat_polygon("dog", B_PART, 9)  # a group of two labels: two objects
        + cvat_polygon("cat", A_PARTS[1], 9)
    )
    dataset = load_dataset(open_source(str(cvat_file(tmp_path, shapes))), None, None).dataset
    assert dataset.crowd_excluded == 1 and len(dataset.boxes) == 3
    expected = [merged(*A_PARTS), merged(B_PART), merged(A_PARTS[1])]
    np.testing.assert_array_equal(np.diag(coco_mask.iou(masks_of(dataset), expected, [0, 0, 0])), [1.0] * 3)


def test_the_read_as_line_names_the_polygons_beside_the_boxes_written(tmp_path: Path) -> None:
    """A rectangle has the format's box convention; a polygon's box is its extent, no convention."""
    result = [rectangle("cat", [30.0, 2.0, 38.0, 10.0]), polygon("cat", B_PART)]
    export = tmp_path / "export.json"
    export.write_text(
        json.dumps([{"data": {"image": "/data/upload/1/a.jpg"}, "annotations": [{"result": result}]}])
    )
    dataset = load_dataset(open_source(str(export)), None, None).dataset

    parts = read_as(dataset, ReadOptions()).read_as
    assert "boxes as x y w h (the format's)" in parts
    assert (
        "1 of 2 objects as polygons, each box its shape's extent (the format's: it writes no box for them)"
        in parts
    )
