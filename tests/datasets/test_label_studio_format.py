"""The Label Studio reader, on exports that the real server made through its export API.

One project (its controls deliberately not named `label` / `image`) holds four tasks whose
images take the four forms a task's `data.image` takes, annotations submitted one after the
other (the newest submitted one counts, a cancelled one never), a rotated box (turned about its
top-left corner, as the editor turns it), a polygon (an object: its mask), and the predictions of
two model versions.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from helpers.label_studio_prepared import READER_CONFIG, READER_EXPORTS, reader_box
from helpers.label_studio_server import add_annotation, create_project, import_tasks
from helpers.node_run import one_error_line, run_node
from label_studio_sdk import LabelStudio
from pycocotools import mask as coco_mask

from handler.boxes import Dataset
from handler.datasets import Loaded, load_dataset
from handler.datasets.labelstudio import image_name
from handler.datasets.read_options import ReadOptions
from handler.engine.masks import measured
from handler.errors import DatasetError
from handler.storage import open_source

ASSETS = ["a.jpg", "b c.jpg", "c.png", "d.jpg"]


@dataclass(frozen=True)
class Exports:
    json: Path  # an export snapshot: predictions written in full
    json_min: Path
    quick: Path  # the quick (synchronous) export: predictions listed by id only


@pytest.fixture(scope="module")
def exports(label_studio_prepared: Callable[[str], Path]) -> Exports:
    """The server's exports of the `reader-rules` project (helpers/label_studio_prepared.py)."""
    folder = label_studio_prepared("reader-rules")
    return Exports(*(folder / READER_EXPORTS[key] for key in ("json", "json_min", "quick")))


def read(path: Path, reference: Loaded | None = None, version: str | None = None) -> Loaded:
    options = ReadOptions("pred", model_version=version) if version else ReadOptions()
    return load_dataset(open_source(str(path)), None, reference, options)


def test_the_ground_truth_is_the_newest_submitted_annotation(exports: Exports) -> None:
    gt = read(exports.json).dataset

    assert gt.format == "label-studio" and gt.asset_ids == ASSETS
    assert [gt.class_names[c] for c in gt.boxes.class_id] == ["dog", "cat", "dog", "cat", "cat"]
    np.testing.assert_allclose(
        gt.boxes.xyxy[[0, 1, 4]], [[12, 20, 110, 220], [300, 100, 400, 300], [1, 2, 50, 60]], atol=1e-9
    )
    np.testing.assert_array_equal(gt.boxes.image, [0, 0, 1, 1, 1])
    np.testing.assert_array_equal(gt.widths, [640, 200, np.nan, np.nan])
    assert gt.confidence_count == 0


def test_a_rotated_box_turns_about_its_top_left_corner_and_a_polygon_is_its_mask(exports: Exports) -> None:
    """The region x=20 y=10 100 by 50 turned 30 degrees about (20, 10): its centre is that corner
    plus the half size turned, and the box model keeps it as the box about that centre."""
    gt = read(exports.json).dataset

    turn = np.deg2rad(30)
    centre = np.array(
        [20 + 50 * np.cos(turn) - 25 * np.sin(turn), 10 + 50 * np.sin(turn) + 25 * np.cos(turn)]
    )
    half = np.array([50, 25])
    np.testing.assert_allclose(gt.boxes.xyxy[2], np.concatenate([centre - half, centre + half]), atol=1e-9)
    np.testing.assert_array_equal(gt.boxes.angle, [0, 0, 30, 0, 0])
    assert gt.skipped_count == 0
    # the polygon's points in percent of 200 x 100, drawn as pycocotools draws them in pixels
    polygon = gt.boxes.mask_runs[[3]]
    expected = coco_mask.frPyObjects([[20.0, 10.0, 100.0, 10.0, 60.0, 40.0]], 100, 200)[0]
    assert coco_mask.decode(expected).sum() == measured(polygon).area[0] > 0
    runs = {"counts": polygon.counts.tolist(), "size": [100, 200]}
    assert coco_mask.iou([coco_mask.frPyObjects(runs, 100, 200)], [expected], [0])[0, 0] == 1.0
    x, y, width, height = coco_mask.toBbox(expected)
    np.testing.assert_array_equal(gt.boxes.xyxy[3], [x, y, x + width, y + height])


def test_several_model_versions_need_a_choice_listing_them(exports: Exports) -> None:
    gt = read(exports.json)
    with pytest.raises(DatasetError) as raised:
        read(exports.json, gt)
    assert str(raised.value).endswith(
        "snapshot.json: predictions of 2 model versions: 'm1' (2 tasks), 'm2' (1 tasks); "
        "choose one with --pred-model-version"
    )
    with pytest.raises(DatasetError, match="no prediction of model version 'm3'; the export holds 'm1'"):
        read(exports.json, gt, "m3")


def test_the_same_export_as_predictions_reads_the_chosen_models_boxes_and_scores(exports: Exports) -> None:
    pred = read(exports.json, read(exports.json), "m1").dataset

    assert pred.asset_ids == ASSETS
    assert [pred.class_names[c] for c in pred.boxes.class_id] == ["dog", "cat", "cat"]
    np.testing.assert_allclose(
        pred.boxes.xyxy, [[10, 20, 110, 220], [300, 100, 400, 300], [1, 2, 50, 60]], atol=1e-9
    )
    # a region's score, else its prediction's
    np.testing.assert_array_equal(pred.boxes.confidence, [0.9, 0.4, 0.8])


def test_a_quick_export_lists_predictions_by_id_and_then_says_how_to_get_them(exports: Exports) -> None:
    tasks = json.loads(exports.quick.read_text())
    assert {type(p) for task in tasks for p in task["predictions"]} == {int}
    with pytest.raises(DatasetError, match=r"predictions are listed by id only .* export a snapshot"):
        read(exports.quick, read(exports.quick), "m1")


def test_a_quick_export_gives_the_predictions_the_annotations_were_made_from(
    label_studio_client: LabelStudio, tmp_path: Path
) -> None:
    client = label_studio_client
    project = create_project(client, READER_CONFIG, title="viewed predictions")
    size = (640, 480)
    # imported with its prediction: the project's model version becomes m1, whose prediction an
    # annotation then records as the one shown (what a labeler correcting a pre-label submits)
    prediction = {"model_version": "m1", "result": [reader_box("cat", (10, 20, 110, 220), size, score=0.6)]}
    (task,) = import_tasks(client, project, [{"data": {"img": "a.jpg"}, "predictions": [prediction]}])
    add_annotation(client, task, [reader_box("cat", (12, 20, 110, 220), size)])
    quick = tmp_path / "quick.json"
    quick.write_bytes(b"".join(client.projects.exports.download_sync(id=project, export_type="JSON")))

    pred = read(quick, read(quick)).dataset

    np.testing.assert_allclose(pred.boxes.xyxy, [[10, 20, 110, 220]], atol=1e-9)
    np.testing.assert_array_equal(pred.boxes.confidence, [0.6])


def test_json_min_gives_the_same_ground_truth(exports: Exports) -> None:
    full, small = read(exports.json).dataset, read(exports.json_min).dataset

    assert small.format == "label-studio-min"
    assert small.asset_ids == ASSETS  # a record per annotation, and one per task without any

    # JSON-MIN lists a task's regions control by control: the same boxes, the polygon's last
    def by_box(dataset: Dataset) -> list[tuple[float, ...]]:
        return sorted(map(tuple, np.round(dataset.boxes.xyxy, 9).tolist()))

    assert by_box(small) == by_box(full)
    assert measured(small.boxes.mask_runs).area.sum() == measured(full.boxes.mask_runs).area.sum() > 0
    assert small.skip_reasons == full.skip_reasons


def test_json_min_as_predictions_is_refused(exports: Exports) -> None:
    with pytest.raises(DatasetError, match="JSON-MIN export holds annotations only, no predictions"):
        read(exports.json_min, read(exports.json))


def test_the_node_names_the_option_for_the_model_version(exports: Exports, tmp_path: Path) -> None:
    inputs = {"GT_DATASET": str(exports.json), "PRED_DATASET": str(exports.json)}
    refused = run_node(tmp_path, **inputs)
    assert "choose one with --pred-model-version" in one_error_line(refused)

    chosen = run_node(tmp_path, **inputs, PRED_MODEL_VERSION="m2", CONFIDENCE_THRESHOLD="0")
    assert chosen.code == 0, chosen.err
    wrong_side = run_node(tmp_path, **inputs, GT_MODEL_VERSION="m2")
    assert "the ground truth of a Label Studio export is its annotations" in one_error_line(wrong_side)


@pytest.mark.parametrize(
    ("reference", "name"),
    [
        ("/data/upload/7/8f1e2a3b-a.jpg", "a.jpg"),
        ("/data/upload/7/a.jpg", "a.jpg"),
        ("https://host/imgs/b%20c.jpg?X-Amz-Signature=abc", "b c.jpg"),
        ("s3://bucket/deep/c.png", "c.png"),
        ("gs://bucket/c.png", "c.png"),
        ("/data/local-files/?d=images/sub/d.jpg", "d.jpg"),
        ("/data/local-files/?d=images%2Fsub%2Fd.jpg", "d.jpg"),
        ("C:\\photos\\e.jpg", "e.jpg"),
        ("f.jpg", "f.jpg"),
        # the upload prefix is Label Studio's only on its upload path
        ("https://host/8f1e2a3b-g.jpg", "8f1e2a3b-g.jpg"),
    ],
)
def test_an_image_reference_names_the_image_file(reference: str, name: str) -> None:
    assert image_name(reference) == name
