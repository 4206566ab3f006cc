"""The shared Label Studio server: a project, tasks, an annotation, a prediction, an export snapshot."""

from __future__ import annotations

import json

from helpers.label_studio_server import (
    LabelStudioServer,
    add_annotation,
    add_prediction,
    create_project,
    export,
    import_tasks,
    rectangle,
    rectangle_config,
)
from label_studio_sdk import LabelStudio


def test_one_task_round_trips_through_the_export_api(label_studio_client: LabelStudio) -> None:
    project = create_project(label_studio_client, rectangle_config(["cat", "dog"]))
    (task,) = import_tasks(label_studio_client, project, [{"data": {"image": "/data/upload/1/a.jpg"}}])
    add_prediction(
        label_studio_client,
        task,
        [rectangle("cat", (10, 20, 50, 60), (640, 480), score=0.9)],
        model_version="m1",
    )
    add_annotation(label_studio_client, task, [rectangle("dog", (12, 20, 50, 60), (640, 480))])

    (exported,) = json.loads(export(label_studio_client, project))

    (annotation,) = exported["annotations"]
    (prediction,) = exported["predictions"]
    assert annotation["result"][0]["value"]["rectanglelabels"] == ["dog"]
    assert annotation["result"][0]["value"]["x"] == 100 * 12 / 640
    assert prediction["model_version"] == "m1"
    assert prediction["result"][0]["score"] == 0.9


def test_the_server_is_shared_and_keeps_its_token(label_studio: LabelStudioServer) -> None:
    assert label_studio.client().users.whoami().email == "lead@example.com"
