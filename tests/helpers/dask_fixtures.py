"""One real dask.distributed LocalCluster (two worker processes) for the whole test session.

Loaded by `tests/conftest.py` (`pytest_plugins`). Starting a cluster costs seconds of worker
start-up, so every dask test shares this one. Its workers reach the session's moto server the way
production workers reach S3, through their environment: the endpoint and the fake keys are fixed
for the session, so they are set when the workers start.

- `dask_cluster` (session): the scheduler address. A test that kills a worker waits, before it
  ends, for the nanny to bring the cluster back to `DASK_WORKERS` (`wait_for_full_cluster`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from helpers.needs import module
from helpers.s3_fixtures import TEST_MAX_ATTEMPTS
from helpers.s3_server import FAKE_KEY, REGION, MotoServer

DASK_WORKERS: Final = 2


def _worker_environment(moto: MotoServer, nowhere: Path) -> dict[str, str]:
    return {
        "AWS_ENDPOINT_URL": moto.endpoint,
        "AWS_ACCESS_KEY_ID": FAKE_KEY,
        "AWS_SECRET_ACCESS_KEY": FAKE_KEY,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_CONFIG_FILE": str(nowhere),
        "AWS_SHARED_CREDENTIALS_FILE": str(nowhere),
        "AWS_EC2_METADATA_DISABLED": "true",
        "PRELABEL_S3_MAX_ATTEMPTS": TEST_MAX_ATTEMPTS,
    }


@pytest.fixture(scope="session")
def dask_cluster(moto_server: MotoServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    distributed = module("distributed", "dask.distributed is part of the test extra")
    env = _worker_environment(moto_server, tmp_path_factory.mktemp("dask-aws") / "absent")
    with distributed.LocalCluster(
        n_workers=DASK_WORKERS, threads_per_worker=1, processes=True, dashboard_address=":0", env=env
    ) as cluster:
        yield cluster.scheduler_address


def wait_for_full_cluster(address: str) -> None:
    """After a worker was killed: the nanny restarts it; the next test needs both workers."""
    import distributed

    with distributed.Client(address, set_as_default=False) as client:  # type: ignore[no-untyped-call]
        client.wait_for_workers(DASK_WORKERS, timeout=60)
