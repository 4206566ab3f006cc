"""Shared test setup, one of each per session: the S3 server (helpers/s3_fixtures.py, moto on
127.0.0.1), the dask cluster (helpers/dask_fixtures.py, its workers pointed at that server) and,
one per run shared by the xdist workers, the Label Studio server (helpers/label_studio_fixtures.py)
and whatever else starts in the background (helpers/background.py)."""

import os

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
