"""Shared test setup, one of each per session: the S3 server (helpers/s3_fixtures.py, moto on
127.0.0.1), the dask cluster (helpers/dask_fixtures.py, its workers pointed at that server) and,
one per run shared by the xdist workers, the Label Studio server (helpers/label_studio_fixtures.py)
and whatever else starts in the background (helpers/background.py)."""

import os

import pytest

pytest_plugins = [
    "helpers.background",
    "helpers.s3_fixtures",
    "helpers.dask_fixtures",
    "helpers.label_studio_fixtures",
    "helpers.dockerfile",
    "helpers.browser_reports",
]


def pytest_xdist_auto_num_workers(config: object) -> int:
    """`-n auto`: one worker more than there are cores. Part of many tests' time is waiting (on a
    node subprocess, a server's answer, a signal's effect), and a third worker on two cores fills
    it: the suite took 264 s instead of 286 s on this machine's two."""
    return len(os.sched_getaffinity(0)) + 1


# The quick tier (`pytest --quick`, docs/testing.md): the fast, representative part of the suite for
# the inner loop: the engine against its references, every format, the inputs, the readings, the
# report's page and exports, the architecture; no server (S3, dask, MPI, Label Studio, Chromium)
# and no long reference run. CI runs everything.
QUICK_PATHS = (
    "tests/engine/",
    "tests/datasets/",
    "tests/inputs/",
    "tests/readings/test_readings.py",
    "tests/readings/test_class_spellings.py",
    "tests/execution/test_plan.py",
    "tests/report/test_report_page.py",
    "tests/report/test_exports.py",
    "tests/report/test_mask_encodings.py",
    "tests/report/test_report_consistency.py",
    "tests/project/test_architecture.py",
    "tests/project/test_docs_true.py",
)
NOT_QUICK = (
    "seeded_bulk",
    "on_grid",
    "float_boxes",
    "label_studio",
    "mpi",
    "s3",
    "dask",
    "of_shards_adds_up",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--quick", action="store_true", help="run the quick tier only (docs/testing.md)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--quick"):
        return
    quick = [
        i for i in items if i.nodeid.startswith(QUICK_PATHS) and not any(s in i.nodeid for s in NOT_QUICK)
    ]
    config.hook.pytest_deselected(items=[i for i in items if i not in set(quick)])
    items[:] = quick
