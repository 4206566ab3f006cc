"""Fixtures for tests against the run's real Label Studio server (helpers/label_studio_server.py).

Loaded by `tests/conftest.py` (`pytest_plugins`).

- The server starts in the background as soon as a session has collected a test that uses
  `label_studio` (so its half minute of migrations overlaps the tests that run first), once per
  run: the xdist workers share it through a file lock and a state file in the run's folder (see
  `RUN_DIR_VARIABLE`). The run's controller stops it and removes the folder when the run ends. A
  run that collects no such test starts nothing.
- `label_studio` (session): the `LabelStudioServer`, ready (`.url`, `.token`, `.client()`).
- `label_studio_client`: a label-studio-sdk client of that server, authenticated with its token.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from helpers.label_studio_server import LabelStudioServer, close_clients, start_shared, stop_shared

if TYPE_CHECKING:
    from label_studio_sdk import LabelStudio

FIXTURE: str = "label_studio"


# The run's folder for the server (its database, log, lock and state file), made by the run's
# controller and inherited by its xdist workers. Not under pytest's basetemp: pytest deletes all
# but the newest three of those at the start of every run, and a run on the same machine (another
# checkout) would delete the database of a server still in use.
RUN_DIR_VARIABLE = "PRELABEL_TEST_LABEL_STUDIO_DIR"


def _controller() -> bool:
    return not os.environ.get("PYTEST_XDIST_WORKER")


def _run_dir() -> Path:
    return Path(os.environ[RUN_DIR_VARIABLE])


def pytest_configure(config: pytest.Config) -> None:
    if _controller():  # a fresh folder per run, even for a pytest started inside a test
        os.environ[RUN_DIR_VARIABLE] = tempfile.mkdtemp(prefix="prelabel-label-studio-")


def pytest_collection_finish(session: pytest.Session) -> None:
    if any(FIXTURE in getattr(item, "fixturenames", ()) for item in session.items):
        start_shared(_run_dir())


def pytest_unconfigure(config: pytest.Config) -> None:
    if _controller() and RUN_DIR_VARIABLE in os.environ:
        stop_shared(_run_dir())
        shutil.rmtree(os.environ.pop(RUN_DIR_VARIABLE), ignore_errors=True)


@pytest.fixture(scope="session")
def label_studio() -> Iterator[LabelStudioServer]:
    pytest.importorskip("label_studio_sdk", reason="label-studio is part of the test extra")
    yield start_shared(_run_dir()).wait_ready()
    close_clients()


@pytest.fixture
def label_studio_client(label_studio: LabelStudioServer) -> LabelStudio:
    return label_studio.client()
