"""Fixtures for tests against a real S3-compatible HTTP server (moto) on 127.0.0.1.

Loaded by `tests/conftest.py` (`pytest_plugins`). The code under test finds the server the way
production finds any S3 store: boto3's `AWS_ENDPOINT_URL` and credential variables.

- `moto_server` (session): the running `MotoServer`; `.endpoint`, `.client()` for seeding.
- `s3_env`: this test's environment points boto3 at moto with fake keys, isolated from any
  `~/.aws` of the machine; `PRELABEL_S3_MAX_ATTEMPTS=3`. Yields the endpoint URL.
- `s3_bucket`: `s3_env` plus a fresh empty bucket; yields its name.
- `s3_client`: a boto3 client straight to moto (never proxied) to seed and inspect buckets.
- `fault_proxy`: a `FaultProxy` in front of moto, with `AWS_ENDPOINT_URL` switched to it.
- `endpoint_down`: `AWS_ENDPOINT_URL` switched to a port where nothing listens; yields it.
- `moto_auth`: implies `s3_bucket` (created first); then moto checks signatures for the rest of
  this test and yields an IAM (key id, secret) pair it accepts (allowed s3:*), so a test can set
  a wrong secret or an unknown key id. The fake "testing" keys are refused meanwhile (also by
  `s3_client`). Auth is switched off again afterwards (the server is shared).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.s3_server import FAKE_KEY, REGION, FaultProxy, MotoServer, free_port

# Variables that could send boto3 elsewhere than the test server, or to other credentials.
FOREIGN_AWS_VARIABLES = (
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_ENDPOINT_URL_S3",
    "AWS_MAX_ATTEMPTS",
    "AWS_RETRY_MODE",
    "AWS_ROLE_ARN",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "PRELABEL_STORE",
)
TEST_MAX_ATTEMPTS = "3"


@pytest.fixture(scope="session")
def moto_server() -> Iterator[MotoServer]:
    server = MotoServer().start()
    yield server
    server.stop()


@pytest.fixture
def s3_env(
    moto_server: MotoServer, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> str:
    for variable in FOREIGN_AWS_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    nowhere = tmp_path_factory.mktemp("aws") / "absent"
    monkeypatch.setenv("AWS_CONFIG_FILE", str(nowhere))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(nowhere))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server.endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", FAKE_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", FAKE_KEY)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    # Few attempts keep the fault tests fast; 3 still leaves room for "500 twice, then fine".
    monkeypatch.setenv("PRELABEL_S3_MAX_ATTEMPTS", TEST_MAX_ATTEMPTS)
    return moto_server.endpoint


@pytest.fixture
def s3_client(moto_server: MotoServer) -> Any:
    return moto_server.client()


@pytest.fixture
def s3_bucket(s3_env: str, s3_client: Any) -> str:
    name = f"prelabel-test-{uuid.uuid4().hex[:12]}"
    s3_client.create_bucket(Bucket=name)
    return name


@pytest.fixture
def fault_proxy(s3_env: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultProxy]:
    proxy = FaultProxy(s3_env).start()
    monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
    yield proxy
    proxy.stop()


@pytest.fixture
def endpoint_down(s3_env: str, monkeypatch: pytest.MonkeyPatch) -> str:
    endpoint = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    return endpoint


@pytest.fixture
def moto_auth(s3_bucket: str, moto_server: MotoServer) -> Iterator[tuple[str, str]]:
    # After `s3_bucket`: the bucket is made with the fake keys, which auth would refuse.
    keys = moto_server.create_access_key(f"prelabel-{uuid.uuid4().hex[:8]}")
    moto_server.enable_auth()
    try:
        yield keys
    finally:
        moto_server.disable_auth()  # the server is shared by the whole session


def put_files(client: Any, bucket: str, files: list[tuple[str, Path]]) -> None:
    """Upload (key, local file) pairs side by side: the server answers each request in tens of
    milliseconds, and a folder of a hundred files one by one is most of a test's time."""
    from concurrent.futures import ThreadPoolExecutor

    def put(pair: tuple[str, Path]) -> None:
        client.put_object(Bucket=bucket, Key=pair[0], Body=pair[1].read_bytes())

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(put, files))
