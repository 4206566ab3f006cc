"""One code path, three executors: in this process, a local process pool, a dask cluster (contract §11).

Each workload runs three times through the node's `run`; the findings must be equal but for
the id, the time and the `execution` block, and the ledger's rows byte for byte. The cluster is the
session's real dask.distributed LocalCluster with two worker processes (helpers/dask_fixtures.py).
"""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.dask_fixtures import wait_for_full_cluster
from helpers.needs import module
from helpers.paths import THIRD_PARTY
from helpers.shards import write_shards

from handler.errors import ExecutionError
from handler.execution import ExecutionOptions
from handler.inputs import parse_inputs
from handler.pipeline import run
from handler.report.finishers import REPORT_PARTS
from handler.report.ledger import OUTCOME_FORMATS, write_outcomes
from handler.report.publish.asset import read_report_part
from handler.storage import Store
from handler.storage.local import LocalStore

distributed = module("distributed", "dask.distributed is part of the test extra")

COCO = THIRD_PARTY / "coco_val2014_100"
CARTUCHO = THIRD_PARTY / "cartucho_mAP_85" / "input"
RUN_ONLY = ("report_id", "created_at", "execution")


@pytest.fixture
def cluster(dask_cluster: str) -> str:
    return dask_cluster


def _outcome(
    store: Store, inputs: dict[str, str], options: ExecutionOptions
) -> tuple[dict[str, Any], bytes, dict[str, Any]]:
    result = run(parse_inputs(inputs), store, execution=options)
    report_id = result.outputs.report_id
    findings = json.loads(read_report_part(store, report_id, REPORT_PARTS["findings"]))
    execution = findings["execution"]
    for key in RUN_ONLY:
        findings.pop(key)
    rows = io.BytesIO()
    write_outcomes(store, report_id, OUTCOME_FORMATS["jsonl"], rows)
    return findings, rows.getvalue(), execution


def _workloads(tmp_path: Path) -> dict[str, dict[str, str]]:
    gt_shards, pred_shards = write_shards(
        COCO / "instances_val2014_100.json", COCO / "instances_val2014_fakebbox100_results.json", tmp_path, 30
    )
    coco = {
        "GT_DATASET": str(COCO / "instances_val2014_100.json"),
        "PRED_DATASET": str(COCO / "instances_val2014_fakebbox100_results.json"),
    }
    return {
        "coco-results": {**coco, "CONFIDENCE_THRESHOLD": "0", "IOU_MIN": "0.5"},
        "coco-results at 0.5": coco,
        "cartucho folders": {
            "GT_DATASET": str(CARTUCHO / "ground-truth"),
            "PRED_DATASET": str(CARTUCHO / "detection-results"),
        },
        # Swapped VOC datasets: numeric ids as the GT's names (a class mapping to words),
        # confidences on the GT side.
        "warned voc": {
            "GT_DATASET": str(THIRD_PARTY / "voc_padilla_100" / "dets" / "abs_xyx2y2"),
            "PRED_DATASET": str(THIRD_PARTY / "voc_padilla_100" / "gts" / "pascalvoc_format"),
        },
        "jsonl shards": {
            "GT_DATASET": str(gt_shards),
            "PRED_DATASET": str(pred_shards),
            "CONFIDENCE_THRESHOLD": "0.3",
        },
    }


def test_three_executors_give_the_same_findings_and_outcome_lines(tmp_path: Path, cluster: str) -> None:
    store = LocalStore(tmp_path / "store")
    executors = {
        "in-process": ExecutionOptions(workers=1),
        "local-processes": ExecutionOptions(workers=2),
        "dask": ExecutionOptions(scheduler=cluster),
    }
    warned = {}
    for name, inputs in _workloads(tmp_path).items():
        runs = {engine: _outcome(store, inputs, options) for engine, options in executors.items()}
        findings, lines, _ = runs["in-process"]
        warned[name] = {warning["code"] for warning in findings["warnings"]}
        assert findings["counts"]["total"] > 0, name
        for engine, (other_findings, other_lines, execution) in runs.items():
            assert execution["engine"] == engine, name
            assert other_findings == findings, (name, engine)
            assert other_lines == lines, (name, engine)
        assert runs["local-processes"][2]["shards"] >= 2, name
    # The warnings are decided from the merged state: every executor raised the same ones.
    assert warned["warned voc"] == {"other_reading", "ground_truth_has_confidences"}


def test_the_coco_counts_checked_by_hand_hold_on_every_executor(tmp_path: Path, cluster: str) -> None:
    inputs = _workloads(tmp_path)["jsonl shards"] | {"CONFIDENCE_THRESHOLD": "0", "IOU_MIN": "0.5"}
    findings, _, execution = _outcome(LocalStore(tmp_path / "s"), inputs, ExecutionOptions(scheduler=cluster))
    counts = findings["counts"]
    assert [
        counts[k] for k in ("correct", "shifted", "class_confused", "false_positive", "false_negative")
    ] == [473, 176, 83, 2, 98]
    assert execution == {"engine": "dask", "workers": 2, "shards": 4}


def _upload(client: Any, bucket: str, folder: Path, prefix: str) -> str:
    for file in sorted(folder.iterdir()):
        client.put_object(Bucket=bucket, Key=f"{prefix}/{file.name}", Body=file.read_bytes())
    return f"s3://{bucket}/{prefix}/"


def test_dask_workers_read_their_own_shards_from_s3_and_write_the_report_there(
    tmp_path: Path, s3_bucket: str, s3_client: Any, cluster: str
) -> None:
    gt_shards, pred_shards = write_shards(
        COCO / "instances_val2014_100.json", COCO / "instances_val2014_fakebbox100_results.json", tmp_path, 25
    )
    inputs = {
        "GT_DATASET": _upload(s3_client, s3_bucket, gt_shards, "data/gt"),
        "PRED_DATASET": _upload(s3_client, s3_bucket, pred_shards, "data/pred"),
    }
    local = _outcome(
        LocalStore(tmp_path / "local"),
        {"GT_DATASET": str(gt_shards), "PRED_DATASET": str(pred_shards)},
        ExecutionOptions(workers=1),
    )
    from handler.storage import open_store

    store = open_store(f"s3://{s3_bucket}/store")
    # The session's workers were started with the moto endpoint and the test keys.
    on_s3 = _outcome(store, inputs, ExecutionOptions(scheduler=cluster))
    assert on_s3[2] == {"engine": "dask", "workers": 2, "shards": 4}
    assert on_s3[1] == local[1]
    assert {k: v for k, v in on_s3[0].items() if k != "dataset"} == {
        k: v for k, v in local[0].items() if k != "dataset"
    }
    chunks = s3_client.list_objects_v2(Bucket=s3_bucket, Prefix="store/reports/")["Contents"]
    assert sum("/ledger/" in o["Key"] for o in chunks) == 4


def _big_shards(tmp_path: Path, copies: int) -> tuple[Path, Path]:
    """coco_val2014_100 tiled `copies` times under new asset ids, as two shards per side."""
    gt_shards, pred_shards = write_shards(
        COCO / "instances_val2014_100.json",
        COCO / "instances_val2014_fakebbox100_results.json",
        tmp_path / "one",
        100,
    )
    out = tmp_path / "big"
    for side, folder in (("gt", gt_shards), ("pred", pred_shards)):
        lines = (folder / "0000.jsonl").read_bytes().splitlines()
        (out / side).mkdir(parents=True)
        for shard in range(2):
            tiled = [
                line.replace(b'"asset_id":"', f'"asset_id":"c{shard}_{copy}_'.encode(), 1)
                for copy in range(copies)
                for line in lines
            ]
            (out / side / f"{shard:04d}.jsonl").write_bytes(b"\n".join(tiled) + b"\n")
    return out / "gt", out / "pred"


def _kill_when(busy: Callable[[], list[int]], done: threading.Event) -> list[int]:
    """SIGKILL the first process `busy()` names, as soon as one shows up."""
    killed: list[int] = []
    while not done.is_set() and not killed:
        for pid in busy()[:1]:
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        time.sleep(0.005)
    return killed


def test_a_dask_worker_killed_mid_shard_is_retried_and_the_findings_do_not_change(
    tmp_path: Path, cluster: str
) -> None:
    gt, pred = _big_shards(tmp_path, copies=20)
    inputs = {"GT_DATASET": str(gt), "PRED_DATASET": str(pred)}
    expected = _outcome(LocalStore(tmp_path / "a"), inputs, ExecutionOptions(workers=1))
    client = distributed.Client(cluster, set_as_default=False)
    pids = client.run(os.getpid)

    def busy() -> list[int]:
        return [pids[address] for address, tasks in client.processing().items() if tasks and address in pids]

    done = threading.Event()
    killer = threading.Thread(target=lambda: killed.extend(_kill_when(busy, done)))
    killed: list[int] = []
    killer.start()
    try:
        got = _outcome(LocalStore(tmp_path / "b"), inputs, ExecutionOptions(scheduler=cluster))
    finally:
        done.set()
        killer.join()
        client.close()
        wait_for_full_cluster(cluster)  # the session's cluster: the next test needs both workers
    assert killed, "no shard was seen running: the kill did not happen"
    assert got[0] == expected[0] and got[1] == expected[1]


def test_a_pool_worker_killed_mid_shard_is_one_error_line_and_no_report(tmp_path: Path) -> None:
    gt, pred = _big_shards(tmp_path, copies=20)
    store_root = tmp_path / "store"
    done = threading.Event()
    killed: list[int] = []
    before = {p.pid for p in multiprocessing.active_children()}  # e.g. the module's dask workers

    def pool_workers() -> list[int]:
        return [p.pid for p in multiprocessing.active_children() if p.pid not in before]

    killer = threading.Thread(target=lambda: killed.extend(_kill_when(pool_workers, done)))
    killer.start()
    try:
        with pytest.raises(ExecutionError, match="a worker process died"):
            run(
                parse_inputs({"GT_DATASET": str(gt), "PRED_DATASET": str(pred)}),
                LocalStore(store_root),
                execution=ExecutionOptions(workers=2),
            )
    finally:
        done.set()
        killer.join()
    assert killed
    left = [p for p in store_root.rglob("*") if p.is_file()] if store_root.exists() else []
    assert left == [], left
