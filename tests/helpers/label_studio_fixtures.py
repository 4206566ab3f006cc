"""Fixtures for tests against the run's real Label Studio server (helpers/label_studio_server.py).

Loaded by `tests/conftest.py` (`pytest_plugins`).

- The server starts in the background as soon as a session has collected a test that uses
  `label_studio` or `label_studio_prepared` (so its half minute of migrations overlaps the tests
  that run first), once per run, shared by the xdist workers (helpers/background.py). With it
  starts the job that makes the projects the tests read (helpers/label_studio_prepared.py) as
  soon as the server answers. A run that collects no such test starts nothing.
- `label_studio` (session): the `LabelStudioServer`, ready (`.url`, `.token`, `.client()`), once
  every preparation is done (so a test's own requests never run alongside them).
- `label_studio_prepared` (session): the folder of a prepared project's exports, by name
  (`label_studio_prepared("calibration")`), waiting for that one only.
- `label_studio_client`: a label-studio-sdk client of that server, authenticated with its token.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from helpers.background import collected, run_late
from helpers.label_studio_prepared import PREPARATIONS, prepared, start_preparing
from helpers.label_studio_server import LabelStudioServer, close_clients, start_shared
from helpers.needs import module

if TYPE_CHECKING:
    from label_studio_sdk import LabelStudio

FIXTURES: frozenset[str] = frozenset({"label_studio", "label_studio_prepared"})
run_late(*FIXTURES)


def pytest_collection_finish(session: pytest.Session) -> None:
    if collected(session, FIXTURES):
        start_preparing()


@pytest.fixture(scope="session")
def label_studio() -> Iterator[LabelStudioServer]:
    module("label_studio_sdk", "label-studio is part of the test extra")
    for name in PREPARATIONS:
        prepared(name)
    yield start_shared().wait_ready()
    close_clients()


@pytest.fixture(scope="session")
def label_studio_prepared() -> Callable[[str], Path]:
    """The folder of a prepared project's exports (helpers/label_studio_prepared.py), by name."""
    module("label_studio_sdk", "label-studio is part of the test extra")
    return prepared


@pytest.fixture
def label_studio_client(label_studio: LabelStudioServer) -> LabelStudio:
    return label_studio.client()
