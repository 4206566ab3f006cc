"""Fixtures for tests against the run's real Label Studio server (helpers/label_studio_server.py).

Loaded by `tests/conftest.py` (`pytest_plugins`).

- The server starts in the background as soon as a session has collected a test that uses
  `label_studio` (so its half minute of migrations overlaps the tests that run first), once per
  run: the xdist workers share it through a file lock and a state file in the run's temp dir. The
  run's controller stops it when the run ends. A run that collects no such test starts nothing.
- `label_studio` (session): the `LabelStudioServer`, ready (`.url`, `.token`, `with .client()`).
- `label_studio_client`: a label-studio-sdk client of that server, authenticated with its token.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from helpers.label_studio_server import LabelStudioServer, start_shared, stop_shared

if TYPE_CHECKING:
    from label_studio_sdk import LabelStudio

FIXTURE: str = "label_studio"


def _run_dir(config: pytest.Config) -> Path:
    # The controller's basetemp; an xdist worker's basetemp is a folder inside it.
    base = config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
    return Path(base).parent if os.environ.get("PYTEST_XDIST_WORKER") else Path(base)


def pytest_collection_finish(session: pytest.Session) -> None:
    if any(FIXTURE in getattr(item, "fixturenames", ()) for item in session.items):
        start_shared(_run_dir(session.config) / "label-studio")


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        stop_shared(_run_dir(session.config) / "label-studio")


@pytest.fixture(scope="session")
def label_studio(pytestconfig: pytest.Config) -> LabelStudioServer:
    pytest.importorskip("label_studio_sdk", reason="label-studio is part of the test extra")
    return start_shared(_run_dir(pytestconfig) / "label-studio").wait_ready()


@pytest.fixture
def label_studio_client(label_studio: LabelStudioServer) -> Iterator[LabelStudio]:
    with label_studio.client() as client:
        yield client
