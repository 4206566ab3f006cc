"""A publish on a real failing store leaves nothing visible, and gc clears what a
killed process left (full file system, read-only store, SIGKILL, S3 failing mid-upload)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers.builders import write_json
from helpers.needs import missing
from helpers.node_run import one_error_line, run_node
from helpers.s3_server import DROP, FaultProxy

from bench.killed import survivors
from handler.cli import main as cli_main
from handler.report.publish.asset import collect_garbage, list_reports
from handler.storage import open_store

GT = {
    "images": [{"id": i, "file_name": f"{i}.jpg", "width": 640, "height": 480} for i in range(200)],
    "annotations": [
        {"id": n, "image_id": n % 200, "category_id": 1, "bbox": [n % 600, 9, 30, 30]} for n in range(4000)
    ],
    "categories": [{"id": 1, "name": "car"}],
}


@pytest.fixture
def gt(tmp_path: Path) -> Path:
    return write_json(tmp_path / "gt.json", GT)


@contextmanager
def _tmpfs(options: str) -> Iterator[Path]:
    """A real tmpfs mounted with `options` (root can mount; anyone else gets the reason)."""
    mount = Path(f"/tmp/prelabel-fs-{uuid.uuid4().hex[:8]}")
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mount)], capture_output=True, text=True
    )
    if done.returncode != 0:
        mount.rmdir()
        missing(f"cannot mount a tmpfs here (root can): {done.stderr.strip() or done.returncode}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)
        mount.rmdir()


def _objects(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


# Out of blocks, or out of inodes: 4 leaves room for the mount's root and the staging folders
# (reports/, .staging-<id>/, outcomes/), so the shard's chunk file is the write that fails.
@pytest.mark.parametrize("options", ["size=64k", "size=1m,nr_inodes=4"])
def test_a_full_file_system_is_one_line_and_leaves_nothing(gt: Path, options: str) -> None:
    with _tmpfs(options) as store:
        line = one_error_line(run_node(store, GT_DATASET=str(gt), PRED_DATASET=str(gt)))
        assert "No space left on device" in line
        assert list(store.iterdir()) == []  # no report folder, no staging, no chunk


def test_a_read_only_store_is_one_line(gt: Path) -> None:
    # A read-only mount: permission bits do not stop root, a read-only file system does.
    with _tmpfs("ro,size=1m") as store:
        line = one_error_line(run_node(store, GT_DATASET=str(gt), PRED_DATASET=str(gt)))
        assert _objects(store) == []
    assert "Read-only file system" in line or "Permission denied" in line


def _killed_while_storing(gt: Path, store: Path) -> bool:
    """SIGKILL the node once its first report object appears; False if it published first.

    The shards write their outcome chunks before the report is built and the manifest written,
    so the first object opens a window of the whole report build."""
    env = {**os.environ, "GT_DATASET": str(gt), "PRED_DATASET": str(gt), "PYTHONPATH": os.getcwd()}
    command = [sys.executable, "-m", "handler", "--store", str(store)]
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    while not _objects(store) and process.poll() is None:
        time.sleep(0.002)
    process.send_signal(signal.SIGKILL)
    process.wait()
    # Its workers end with it, a moment later (the kernel's parent-death signal): until they
    # have, one may still be writing its chunk, after gc has looked.
    assert survivors(process.pid) == ()
    return not any(p.name == "manifest.json" for p in _objects(store))


def test_a_sigkill_while_storing_is_cleared_by_gc(tmp_path: Path) -> None:
    # Boxes apart (no overlapping pairs to count): building the report takes a moment to kill in.
    boxes = [
        {"id": n, "image_id": n % 200, "category_id": 1, "bbox": [n // 200 * 8, 9, 5, 5]}
        for n in range(15_000)
    ]
    gt = write_json(tmp_path / "many.json", {**GT, "annotations": boxes})
    # The kill lands inside the report build (a window of a few hundred ms) unless the machine
    # stalls the poll: a few attempts, then a failure rather than a skip that would prove nothing.
    for attempt in range(5):
        store = tmp_path / f"store{attempt}"
        if _killed_while_storing(gt, store):
            break
    else:
        pytest.fail("in 5 attempts every publish finished before the kill landed", pytrace=False)
    # Only the hidden staging folder is left: no reader lists it or can name it.
    assert _objects(store) and all(p.parent.parent.name.startswith(".staging-") for p in _objects(store))
    assert list_reports(open_store(str(store))) == []
    assert next((store / "reports").iterdir()).name.startswith(".staging-rpt_")
    # Too young for the next run's sweep (24 h); gc told to take any age clears it.
    assert cli_main(["gc", "--older-than", "0s", "--store", str(store)]) == 0
    assert list(store.iterdir()) == []


def test_an_s3_upload_failing_mid_way_leaves_nothing_after_gc(
    gt: Path, s3_bucket: str, fault_proxy: FaultProxy
) -> None:
    fault_proxy.fail_matching("PUT", r"report\.html")
    uri = f"s3://{s3_bucket}/team"
    line = one_error_line(run_node(uri, GT_DATASET=str(gt), PRED_DATASET=str(gt)))
    assert "report.html" in line
    fault_proxy.heal()
    store = open_store(uri)
    collect_garbage(store, 0, now=time.time() + 1)
    assert store.list("reports/") == []


def test_an_s3_connection_cut_mid_upload_leaves_nothing_after_gc(
    gt: Path, s3_bucket: str, fault_proxy: FaultProxy
) -> None:
    """The proxy reads half of the page's PUT, then hangs up: every retry is cut the same way."""
    fault_proxy.drop_matching("PUT", r"report\.html")
    uri = f"s3://{s3_bucket}/team"
    line = one_error_line(run_node(uri, GT_DATASET=str(gt), PRED_DATASET=str(gt)))
    assert "report.html" in line
    assert any(seen.status == DROP for seen in fault_proxy.seen)
    fault_proxy.heal()
    store = open_store(uri)
    collect_garbage(store, 0, now=time.time() + 1)
    assert store.list("reports/") == []
