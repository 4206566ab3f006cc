"""Label Studio projects the tests read, made once per run in the background as soon as the run's
server answers: the job `label-studio-projects` of helpers/background.py.

Each preparation makes a project through label-studio-sdk and writes the server's own exports into
its folder (`prepared(NAME)` waits for it and returns it). The biggest, the calibration project, is
180 tasks with an annotation each, one request apiece: made while the workers run other tests, it
costs them no waiting. The
`label_studio` fixture waits for every preparation before a test talks to the server itself, so
no test's requests run alongside an import (see `import_tasks`).

A preparation is one function here and one line in `PREPARATIONS`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from xml.sax.saxutils import quoteattr

from helpers.background import finish_job, start_helper_job, wait_for
from helpers.label_studio_server import (
    add_annotation,
    add_prediction,
    create_project,
    export,
    import_tasks,
    keep_template,
    rectangle,
    rectangle_config,
    start_shared,
)
from helpers.labeler_logs import SimulatedTask, simulated_tasks
from helpers.paths import THIRD_PARTY
from helpers.rotated_boxes import IMAGES as ROTATED_IMAGES
from helpers.rotated_boxes import LABELS as ROTATED_LABELS
from helpers.rotated_boxes import label_studio_region, rotated_dataset
from helpers.tool_files import coco_images, coco_masks, label_studio_tasks
from helpers.tool_renderings import label_studio_converted

if TYPE_CHECKING:
    from label_studio_sdk import LabelStudio


# --- calibration: simulated labelers at work through the API (test_calibrate_label_studio.py)

CALIBRATION_TASKS: Final = 180
CALIBRATION_SEED: Final = 2511
CALIBRATION_EXPORT: Final = "label_studio_export.json"


def calibration_tasks() -> list[SimulatedTask]:
    return simulated_tasks(CALIBRATION_TASKS, seed=CALIBRATION_SEED)


def _labelers_at_work(client: LabelStudio, project: int, tasks: list[SimulatedTask]) -> list[int]:
    """Each task imported with a prediction, each annotation created from it (`parent_prediction`)
    with its `lead_time`, as the editor does: the tasks' ids."""
    with_predictions = [
        {"data": {"image": f"/data/{n}.jpg"}, "predictions": [_simulated(task.prediction)]}
        for n, task in enumerate(tasks)
    ]
    imported = import_tasks(client, project, with_predictions)
    predictions = _prediction_ids(client, project)
    for task_id, task in zip(imported, tasks, strict=True):
        client.annotations.create(
            id=task_id,
            result=task.annotation,
            lead_time=task.lead_time,
            parent_prediction=predictions[task_id],
            was_cancelled=False,
        )
    return imported


def calibration(client: LabelStudio, folder: Path) -> None:
    """The simulated labelers at work on boxes; plus one cancelled and one unlinked annotation."""
    project = create_project(client, rectangle_config(["car", "truck"]), title="calibration")
    imported = _labelers_at_work(client, project, calibration_tasks())
    extra = import_tasks(client, project, [{"data": {"image": "/data/extra.jpg"}}])[-1:]
    client.annotations.create(id=extra[0], result=[], lead_time=9.0)  # no prediction: unlinked
    client.annotations.create(id=imported[0], result=[], lead_time=3.0, was_cancelled=True)
    (folder / CALIBRATION_EXPORT).write_bytes(export(client, project))


# The same on polygons: each region as the editor submits it, with its `origin`.
MASK_CALIBRATION_TASKS: Final = 180
MASK_CALIBRATION_SEED: Final = 2513


def mask_calibration_tasks() -> list[SimulatedTask]:
    return simulated_tasks(MASK_CALIBRATION_TASKS, seed=MASK_CALIBRATION_SEED, masks=True)


def calibration_masks(client: LabelStudio, folder: Path) -> None:
    """The simulated labelers at work on polygons, in a project of polygon labels."""
    labels = '<Label value="car"/><Label value="truck"/>'
    project = create_project(client, MASK_CONFIG.format(labels=labels), title="calibration on masks")
    _labelers_at_work(client, project, mask_calibration_tasks())
    (folder / CALIBRATION_EXPORT).write_bytes(export(client, project))


# The same labelers' work imported the other way: tasks with their predictions and their reviewed
# annotations in one import (a migrated project), so no annotation names the prediction it came
# from; and a few tasks with two models' predictions, where none can be told.
IMPORTED_SEED: Final = 2512
TWO_MODEL_TASKS: Final = 7


def imported_tasks() -> list[SimulatedTask]:
    return simulated_tasks(CALIBRATION_TASKS, seed=IMPORTED_SEED)


def calibration_imported(client: LabelStudio, folder: Path) -> None:
    """`calibration`'s labelers, imported with predictions and annotations side by side."""
    tasks = imported_tasks()
    project = create_project(client, rectangle_config(["car", "truck"]), title="calibration-imported")
    migrated = [
        {
            "data": {"image": f"/data/m{n}.jpg"},
            "predictions": [_simulated(task.prediction)],
            "annotations": [{"result": task.annotation, "lead_time": task.lead_time}],
        }
        for n, task in enumerate(tasks)
    ]
    two_models = [
        {
            "data": {"image": f"/data/two{n}.jpg"},
            "predictions": [
                _simulated(task.prediction),
                {**_simulated(task.prediction), "model_version": "other"},
            ],
            "annotations": [{"result": task.annotation, "lead_time": task.lead_time}],
        }
        for n, task in enumerate(tasks[:TWO_MODEL_TASKS])
    ]
    import_tasks(client, project, [*migrated, *two_models])
    (folder / CALIBRATION_EXPORT).write_bytes(export(client, project))


def _simulated(result: list[dict[str, Any]]) -> dict[str, Any]:
    return {"result": result, "model_version": "sim"}


def _prediction_ids(client: LabelStudio, project_id: int) -> dict[int, int]:
    """Each task's prediction id, as the export reports them."""
    document: list[dict[str, Any]] = json.loads(export(client, project_id))
    return {task["id"]: task["predictions"][0]["id"] for task in document if task["predictions"]}


# --- reader rules: a small project of every case the reader handles (test_label_studio_format.py)

READER_CONFIG: Final = """<View>
  <Image name="photo" value="$img"/>
  <RectangleLabels name="bbox" toName="photo"><Label value="cat"/><Label value="dog"/></RectangleLabels>
  <PolygonLabels name="outline" toName="photo"><Label value="cat"/><Label value="dog"/></PolygonLabels>
  <Choices name="quality" toName="photo"><Choice value="sharp"/><Choice value="blurry"/></Choices>
</View>"""
READER_IMAGES: Final = [
    ("/data/upload/7/8f1e2a3b-a.jpg", (640, 480)),
    ("https://bucket.example.com/imgs/b%20c.jpg?X-Amz-Signature=abc", (200, 100)),
    ("s3://bucket/deep/c.png", (300, 300)),
    ("/data/local-files/?d=images/sub/d.jpg", (50, 40)),
]
READER_EXPORTS: Final = {"json": "snapshot.json", "json_min": "snapshot-min.json", "quick": "quick.json"}
POLYGON: Final[dict[str, Any]] = {
    "from_name": "outline",
    "to_name": "photo",
    "type": "polygonlabels",
    "original_width": 200,
    "original_height": 100,
    "value": {"points": [[10, 10], [50, 10], [30, 40]], "polygonlabels": ["cat"]},
}
CHOICE: Final[dict[str, Any]] = {
    "from_name": "quality",
    "to_name": "photo",
    "type": "choices",
    "value": {"choices": ["sharp"]},
}


def reader_box(
    label: str, xyxy: tuple[float, float, float, float], size: tuple[int, int], **extra: Any
) -> dict[str, Any]:
    """A region of the reader-rules project (its controls are not named `label` / `image`)."""
    return rectangle(label, xyxy, size, control="bbox", image="photo", **extra)


def reader_rules(client: LabelStudio, folder: Path) -> None:
    """Four image forms, annotations one after the other (the newest submitted counts, a cancelled
    one never), a rotated box, a polygon, and the predictions of two model versions."""
    project = create_project(client, READER_CONFIG, title="reader rules")
    a, b, _, _ = import_tasks(client, project, [{"data": {"img": image}} for image, _ in READER_IMAGES])
    size_a, size_b = READER_IMAGES[0][1], READER_IMAGES[1][1]
    add_annotation(client, a, [reader_box("cat", (10, 20, 110, 220), size_a)])
    add_annotation(
        client,
        a,
        [reader_box("dog", (12, 20, 110, 220), size_a), reader_box("cat", (300, 100, 400, 300), size_a)],
    )
    add_annotation(client, a, [reader_box("cat", (0, 0, 5, 5), size_a)], was_cancelled=True)
    rotated = reader_box("dog", (20, 10, 120, 60), size_b, rotation=30)
    add_annotation(client, b, [rotated, POLYGON, CHOICE, reader_box("cat", (1, 2, 50, 60), size_b)])
    add_prediction(
        client,
        a,
        [
            reader_box("dog", (10, 20, 110, 220), size_a, score=0.9),
            reader_box("cat", (300, 100, 400, 300), size_a),
        ],
        model_version="m1",
        score=0.4,
    )
    add_prediction(client, a, [reader_box("cat", (0, 0, 100, 100), size_a, score=0.7)], model_version="m2")
    add_prediction(client, b, [reader_box("cat", (1, 2, 50, 60), size_b, score=0.8)], model_version="m1")
    (folder / READER_EXPORTS["json"]).write_bytes(export(client, project))
    (folder / READER_EXPORTS["json_min"]).write_bytes(export(client, project, "JSON_MIN"))
    quick = client.projects.exports.download_sync(id=project, export_type="JSON", download_all_tasks=True)
    (folder / READER_EXPORTS["quick"]).write_bytes(b"".join(quick))


# --- the COCO val2014 pair (tests/data) as one project (test_coco_pair_through_tools.py)

COCO_PAIR: Final = THIRD_PARTY / "coco_val2014_100"
COCO_PAIR_GT: Final = COCO_PAIR / "instances_val2014_100.json"
COCO_PAIR_RESULTS: Final = COCO_PAIR / "instances_val2014_fakebbox100_results.json"
COCO_PAIR_EXPORT: Final = "project-export.json"


def coco_pair(client: LabelStudio, folder: Path) -> None:
    """The pair as tasks (GT as annotations, detections as predictions), imported and exported."""
    if not COCO_PAIR.exists():
        return  # the test skips and says why
    gt = json.loads(COCO_PAIR_GT.read_text())
    results = json.loads(COCO_PAIR_RESULTS.read_text())
    tasks = label_studio_tasks(
        coco_images(gt),
        coco_images(gt, results),
        model_version="fakebbox100",
        image_root="http://images.cocodataset.org/val2014/",
    )
    project = create_project(client, rectangle_config([c["name"] for c in gt["categories"]]))
    if len(import_tasks(client, project, tasks)) != len(tasks):
        raise RuntimeError(f"the pair's project holds other than its {len(tasks)} tasks")
    (folder / COCO_PAIR_EXPORT).write_bytes(export(client, project))


COCO_MASKS_RESULTS: Final = COCO_PAIR / "instances_val2014_fakesegm100_results.json"
# A polygon control and a brush control, named as `tool_files.mask_region` names them.
MASK_CONFIG: Final = (
    '<View><Image name="image" value="$image"/>'
    '<PolygonLabels name="label" toName="image">{labels}</PolygonLabels>'
    '<BrushLabels name="brush" toName="image">{labels}</BrushLabels></View>'
)


def coco_masks_pair(client: LabelStudio, folder: Path) -> None:
    """The pair on masks as tasks (GT polygons and brushes as annotations, the mask results as
    a model's brush predictions), imported and exported (test_masks_through_label_studio.py)."""
    if not COCO_PAIR.exists():
        return  # the test skips and says why
    gt = json.loads(COCO_PAIR_GT.read_text())
    results = json.loads(COCO_MASKS_RESULTS.read_text())
    tasks = label_studio_tasks(
        coco_masks(gt), coco_masks(gt, results), model_version="fakesegm100", image_root="/data/upload/1/"
    )
    labels = "".join(f"<Label value={quoteattr(c['name'])}/>" for c in gt["categories"])
    project = create_project(client, MASK_CONFIG.format(labels=labels), title="coco masks")
    if len(import_tasks(client, project, tasks)) != len(tasks):
        raise RuntimeError(f"the masks' project holds other than its {len(tasks)} tasks")
    (folder / COCO_PAIR_EXPORT).write_bytes(export(client, project))


CONVERTED_EXPORTS: Final = {"JSON": "converted.json", "JSON_MIN": "converted-min.json"}


def coco_converted(client: LabelStudio, folder: Path) -> None:
    """The pair on masks as label-studio-sdk renders it (`tool_renderings.label_studio_converted`:
    its COCO import for the GT, its brush encoder for the mask results), imported into a project
    of the import's own labeling config and exported as JSON and JSON-MIN."""
    if not COCO_PAIR.exists():
        return  # the test skips and says why
    gt = json.loads(COCO_PAIR_GT.read_text())
    results = json.loads(COCO_MASKS_RESULTS.read_text())
    tasks, config = label_studio_converted(folder / "converter", gt, results)
    project = create_project(client, config, title="coco converted")
    if len(import_tasks(client, project, tasks)) != len(tasks):
        raise RuntimeError(f"the converted project holds other than its {len(tasks)} tasks")
    for kind, name in CONVERTED_EXPORTS.items():
        (folder / name).write_bytes(export(client, project, kind))


# --- rotated boxes: helpers/rotated_boxes.py's dataset as one project (test_rotated_tools.py)

ROTATED_EXPORTS: Final = {"json": "rotated.json", "yolo_obb": "rotated-yolo-obb.zip"}


def rotated(client: LabelStudio, folder: Path) -> None:
    """Rotated GT boxes as annotations and rotated predictions beside them, exported as JSON and
    by the server's own YOLO OBB converter."""
    gt, pred = rotated_dataset()
    tasks = [
        {
            "data": {"image": f"/data/upload/1/{name}"},
            "annotations": [{"result": [label_studio_region(b, width, height) for b in gt[name]]}],
            "predictions": [
                {
                    "model_version": "obb",
                    "result": [label_studio_region(b, width, height) for b in pred[name]],
                }
            ],
        }
        for name, width, height in ROTATED_IMAGES
    ]
    project = create_project(client, rectangle_config(list(ROTATED_LABELS)), title="rotated")
    import_tasks(client, project, tasks)
    (folder / ROTATED_EXPORTS["json"]).write_bytes(export(client, project))
    (folder / ROTATED_EXPORTS["yolo_obb"]).write_bytes(export(client, project, "YOLO_OBB"))


# In this order: the small ones first, so their tests need not wait for the big one.
PREPARATIONS: Final[Mapping[str, Callable[[LabelStudio, Path], None]]] = {
    "reader-rules": reader_rules,
    "rotated": rotated,
    "coco-pair": coco_pair,
    "coco-masks": coco_masks_pair,
    "coco-converted": coco_converted,
    "calibration": calibration,
    "calibration-imported": calibration_imported,
    "calibration-masks": calibration_masks,
}


# --- the background job -----------------------------------------------------------------------

PROJECTS_JOB: Final = "label-studio-projects"


def start_preparing() -> None:
    """Start the job that makes every preparation (once per run), with the server it needs."""
    start_shared()
    start_helper_job(PROJECTS_JOB, "label_studio_prepared")


def prepared(name: str) -> Path:
    """The folder of preparation `name`'s exports, once made (started if no worker started it)."""
    start_preparing()
    return wait_for(name)


def prepare_all() -> None:
    """Wait for the run's server, then make every preparation, each marked done or failed."""
    client = start_shared().wait_ready().client()
    keep_template()
    for name, preparation in PREPARATIONS.items():
        finish_job(name, functools.partial(preparation, client))


if __name__ == "__main__":
    prepare_all()
