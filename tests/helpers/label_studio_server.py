"""A real Label Studio server (the `label-studio` package, sqlite) on 127.0.0.1, one per pytest run.

Its start-up (Django migrations on a fresh database) takes half a minute of CPU, so it starts once
per run, in the background, as soon as a session has collected a test that needs it, and every
xdist worker shares it: a job of helpers/background.py, which also stops it when the run ends and,
through a watchdog, when the run is killed, so no server outlives its run.

The server knows one user, with a fixed legacy API token (`LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN`,
`LABEL_STUDIO_USER_TOKEN`), created from environment variables so nothing prompts.

Client helpers below speak label-studio-sdk, the way a user's script does: create a project with a
labeling config, import tasks, add annotations and predictions, export through the export API.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import shutil
import sqlite3
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from helpers.background import run_dir, start_once
from helpers.paths import TEST_CACHE
from helpers.s3_server import HOST, free_port
from helpers.watchdog import alive

if TYPE_CHECKING:
    import httpx
    from label_studio_sdk import LabelStudio

TOKEN: Final = "prelabel-test-token-0123456789"
USERNAME: Final = "lead@example.com"
PASSWORD: Final = "prelabel-test-password"
# Migrations on a fresh sqlite take ~30 s on an idle core; a loaded machine takes longer.
READY_TIMEOUT_S: Final = 300.0
DATABASE: Final = "label_studio.sqlite3"
_CONNECTIONS: list[httpx.Client] = []


@dataclass(frozen=True)
class LabelStudioServer:
    """Where the run's server listens, and the process that owns it (the watchdog)."""

    url: str
    token: str
    pid: int
    log: str

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> LabelStudioServer:
        """Block until `/health` answers 200; the user and its token exist by then."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not alive(self.pid):
                raise RuntimeError(
                    f"Label Studio exited during start-up; its log: {self.log}\n{_tail(self.log)}"
                )
            with (
                contextlib.suppress(OSError, urllib.error.URLError),
                urllib.request.urlopen(f"{self.url}/health", timeout=5) as answer,
            ):
                if answer.status == 200:
                    return self
            time.sleep(0.5)
        raise TimeoutError(f"Label Studio did not answer within {timeout:.0f} s; its log: {self.log}")

    def client(self) -> LabelStudio:
        """A label-studio-sdk client; its connections stay open until `close_clients` (a client
        collected with a socket open would warn in whichever test runs then)."""
        import httpx
        from label_studio_sdk import LabelStudio

        connections = httpx.Client(timeout=120)
        _CONNECTIONS.append(connections)
        return LabelStudio(base_url=self.url, api_key=self.token, httpx_client=connections)


def close_clients() -> None:
    """Close the connections of every client made in this process (at the session's end)."""
    while _CONNECTIONS:
        _CONNECTIONS.pop().close()


SERVER_JOB: Final = "label-studio"


def start_shared() -> LabelStudioServer:
    """The run's server: started here if no worker started it yet (it may still be starting).
    helpers/background.py stops it when the run ends."""
    state = start_once(SERVER_JOB, _server_job)
    return LabelStudioServer(url=state["url"], token=TOKEN, pid=state["pid"], log=state["log"])


def _server_job() -> tuple[list[str], dict[str, str], dict[str, Any]]:
    port = free_port()
    data = run_dir() / "label-studio-data"
    (data / "tmp").mkdir(parents=True, exist_ok=True)
    if _template().exists():  # migrated already: the start skips the half minute of migrations
        shutil.copyfile(_template(), data / DATABASE)
    return _server_command(port), _server_environment(data), {"url": f"http://{HOST}:{port}"}


def keep_template() -> None:
    """Keep the fresh database of a ready server (migrated, its user made, no project yet) as the
    machine's template for the next runs' servers, if there is none for this Label Studio yet.

    The template is a cache, as pip's is: it lives outside the checkout, under `~/.cache`, per
    Label Studio version; the first run on a machine migrates, and deleting it costs one such run."""
    template = _template()
    if template.exists():
        return
    template.parent.mkdir(parents=True, exist_ok=True)
    partial = template.with_suffix(f".{os.getpid()}.partial")
    with (
        contextlib.closing(sqlite3.connect(run_dir() / "label-studio-data" / DATABASE)) as source,
        contextlib.closing(sqlite3.connect(partial)) as copy,
    ):
        source.backup(copy)  # consistent even while the server runs
    partial.replace(template)


def _template() -> Path:
    return TEST_CACHE / f"label-studio-{importlib.metadata.version('label-studio')}.sqlite3"


def _server_command(port: int) -> list[str]:
    label_studio = Path(sys.executable).with_name("label-studio")
    return [str(label_studio), "start", "--no-browser", "--internal-host", HOST, "--port", str(port)]


def _server_environment(data_dir: Path) -> dict[str, str]:
    inherited = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("LABEL_STUDIO_", "DJANGO_", "PYTEST_"))
    }
    return {
        **inherited,
        "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir),
        "TMPDIR": str(data_dir / "tmp"),  # its exports' temporary files go with the run, not into /tmp
        "LABEL_STUDIO_USERNAME": USERNAME,
        "LABEL_STUDIO_PASSWORD": PASSWORD,
        "LABEL_STUDIO_USER_TOKEN": TOKEN,
        "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",
        # nothing leaves the machine: no version check, no analytics
        "LATEST_VERSION_CHECK": "false",
        "COLLECT_ANALYTICS": "false",
        "LOG_LEVEL": "WARNING",
    }


def _tail(path: str, lines: int = 20) -> str:
    with contextlib.suppress(OSError):
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    return ""


# --- client helpers (label-studio-sdk) ------------------------------------------------------------

RECTANGLE_CONFIG: Final = (
    '<View><Image name="{image}" value="$image"/>'
    '<RectangleLabels name="{control}" toName="{image}">{labels}</RectangleLabels></View>'
)


def rectangle_config(classes: Sequence[str], *, control: str = "label", image: str = "image") -> str:
    """A labeling config with one RectangleLabels control; names are configurable on purpose."""
    from xml.sax.saxutils import quoteattr

    labels = "".join(f"<Label value={quoteattr(name)}/>" for name in classes)
    return RECTANGLE_CONFIG.format(image=image, control=control, labels=labels)


def create_project(client: LabelStudio, label_config: str, title: str = "prelabel test project") -> int:
    project = client.projects.create(title=title, label_config=label_config)
    assert project.id is not None
    return int(project.id)


# Imports tried at most: see `import_tasks`.
IMPORT_ATTEMPTS: Final = 3


def import_tasks(client: LabelStudio, project_id: int, tasks: Sequence[Mapping[str, Any]]) -> list[int]:
    """Import `tasks` (with their `annotations` / `predictions`, if any); their ids, in order.

    The import is checked against what was sent: Label Studio's server (Django's runserver, a
    thread per request) was seen to keep the tasks of a 100-task import but none of their
    annotations and predictions while another test's requests ran alongside. Such an import is
    undone and made again, and a third such one fails the test."""
    expected = [
        len(tasks),
        *(sum(len(task.get(key, ())) for task in tasks) for key in ("annotations", "predictions")),
    ]
    for _ in range(IMPORT_ATTEMPTS):
        imported = client.projects.import_tasks(id=project_id, request=list(tasks), return_task_ids=True)
        written = [imported.task_count, imported.annotation_count or 0, imported.prediction_count or 0]
        if written == expected:
            break
        client.tasks.delete_all_tasks(id=project_id)
    else:
        raise RuntimeError(
            f"Label Studio imported {written} tasks, annotations, predictions; sent {expected}"
        )
    return sorted(int(task.id) for task in client.tasks.list(project=project_id) if task.id is not None)


def add_annotation(
    client: LabelStudio, task_id: int, result: Sequence[Mapping[str, Any]], *, was_cancelled: bool = False
) -> int:
    annotation = client.annotations.create(id=task_id, result=list(result), was_cancelled=was_cancelled)
    assert annotation.id is not None
    return int(annotation.id)


def add_prediction(
    client: LabelStudio,
    task_id: int,
    result: Sequence[Mapping[str, Any]],
    *,
    model_version: str,
    score: float | None = None,
) -> int:
    prediction = client.predictions.create(
        task=task_id, result=list(result), model_version=model_version, score=score
    )
    assert prediction.id is not None
    return int(prediction.id)


def export(client: LabelStudio, project_id: int, export_type: str = "JSON") -> bytes:
    """An export snapshot of every task, as the UI's Export button makes it (full predictions)."""
    snapshot = client.projects.exports.create(
        id=project_id,
        title="prelabel test export",
        serialization_options={"predictions": {"only_id": False}},
    )
    deadline = time.monotonic() + 60
    while snapshot.status != "completed":
        if snapshot.status == "failed" or time.monotonic() > deadline:
            raise RuntimeError(f"Label Studio export {snapshot.id} ended {snapshot.status}")
        time.sleep(0.2)
        assert snapshot.id is not None
        snapshot = client.projects.exports.get(id=project_id, export_pk=snapshot.id)
    assert snapshot.id is not None
    return b"".join(
        client.projects.exports.download(id=project_id, export_pk=snapshot.id, export_type=export_type)
    )


def rectangle(
    label: str,
    xyxy_px: Sequence[float],
    size: tuple[int, int],
    *,
    score: float | None = None,
    rotation: float = 0.0,
    control: str = "label",
    image: str = "image",
) -> dict[str, Any]:
    """One `rectanglelabels` region, in percent of the image (`size` = width, height)."""
    width, height = size
    x0, y0, x1, y1 = xyxy_px
    region: dict[str, Any] = {
        "from_name": control,
        "to_name": image,
        "type": "rectanglelabels",
        "original_width": width,
        "original_height": height,
        "image_rotation": 0,
        "value": {
            "x": 100.0 * x0 / width,
            "y": 100.0 * y0 / height,
            "width": 100.0 * (x1 - x0) / width,
            "height": 100.0 * (y1 - y0) / height,
            "rotation": rotation,
            "rectanglelabels": [label],
        },
    }
    if score is not None:
        region["score"] = score
    return region
