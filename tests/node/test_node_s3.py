"""The node end to end against a real S3-compatible server (moto, over HTTP on 127.0.0.1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.node_run import cli_as_text as cli
from helpers.node_run import run_node
from helpers.paths import EXAMPLES, THIRD_PARTY
from helpers.s3_fixtures import put_files
from helpers.s3_server import FaultProxy

COCO = THIRD_PARTY / "coco_val2014_100"


def node(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The node as its own process: its store from $PRELABEL_STORE, S3 reached from its environment."""
    return subprocess.run(
        [sys.executable, "-m", "handler", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )


def in_process(store: str, **inputs: str) -> subprocess.CompletedProcess[str]:
    """The node in this process, the cheaper run where the interpreter is not the subject."""
    run = run_node(store, **inputs)
    return subprocess.CompletedProcess([], run.code, run.out, run.err)


def upload(client: Any, bucket: str, key: str, path: Path) -> str:
    client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())
    return f"s3://{bucket}/{key}"


def outputs_of(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    assert result.returncode == 0, result.stderr
    outputs: dict[str, str] = json.loads(result.stdout.strip().splitlines()[-1])
    return outputs


def test_datasets_in_a_bucket_and_the_report_uploaded(s3_bucket: str, s3_client: Any) -> None:
    gt = upload(s3_client, s3_bucket, "in put/gt é.json", EXAMPLES / "gt.json")
    pred = upload(s3_client, s3_bucket, "in put/prédictions 1.jsonl", EXAMPLES / "predictions.jsonl")
    store = f"s3://{s3_bucket}/assets"
    outputs = outputs_of(node(GT_DATASET=gt, PRED_DATASET=pred, PRELABEL_STORE=store))
    prefix = f"assets/reports/{outputs['REPORT_ID']}/"
    types = {
        name: s3_client.head_object(Bucket=s3_bucket, Key=prefix + name)["ContentType"]
        for name in ("findings.json", "report.html", "manifest.json")
    }
    assert types["findings.json"] == "application/json"
    assert types["report.html"].startswith("text/html")
    shown = cli("show", outputs["REPORT_ID"], "--json", "--store", store)
    assert shown.returncode == 0, shown.stderr
    findings = json.loads(shown.stdout)
    assert findings["efficiency_level"] == outputs["EFFICIENCY_LEVEL"]
    assert findings["dataset"]["images"] == 24
    assert cli("show", outputs["REPORT_ID"], "--store", store, "--html").stdout.startswith("<!DOCTYPE html>")


def test_coco_results_list_from_s3_equals_local(s3_bucket: str, s3_client: Any, tmp_path: Path) -> None:
    gt_path, pred_path = (
        COCO / "instances_val2014_100.json",
        COCO / "instances_val2014_fakebbox100_results.json",
    )
    gt = upload(s3_client, s3_bucket, "coco/gt.json", gt_path)
    pred = upload(s3_client, s3_bucket, "coco/results.json", pred_path)
    remote = outputs_of(in_process(f"s3://{s3_bucket}/r", GT_DATASET=gt, PRED_DATASET=pred))
    local = outputs_of(in_process(str(tmp_path), GT_DATASET=str(gt_path), PRED_DATASET=str(pred_path)))
    remote_findings = json.loads(
        cli("show", remote["REPORT_ID"], "--json", "--store", f"s3://{s3_bucket}/r").stdout
    )
    local_findings = json.loads((tmp_path / "reports" / local["REPORT_ID"] / "findings.json").read_text())
    assert remote_findings["counts"] == local_findings["counts"]


def test_dataset_ids_resolve_inside_the_store(s3_bucket: str, s3_client: Any) -> None:
    upload(s3_client, s3_bucket, "store/datasets/ds_01HGT/gt.json", EXAMPLES / "gt.json")
    upload(
        s3_client, s3_bucket, "store/datasets/ds_01HPRED/predictions.jsonl", EXAMPLES / "predictions.jsonl"
    )
    outputs = outputs_of(
        in_process(f"s3://{s3_bucket}/store", GT_DATASET="ds_01HGT", PRED_DATASET="ds_01HPRED")
    )
    assert outputs["REPORT_ID"].startswith("rpt_")


def assert_failed_cleanly(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 2 and "REPORT_ID" not in result.stdout
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in last, last


def test_upload_failing_for_good_leaves_no_report(
    s3_bucket: str, s3_client: Any, fault_proxy: FaultProxy
) -> None:
    fault_proxy.fail_matching("PUT", r"report\.html$")
    result = in_process(
        f"s3://{s3_bucket}/store",
        GT_DATASET=str(EXAMPLES / "gt.json"),
        PRED_DATASET=str(EXAMPLES / "predictions.jsonl"),
    )
    assert_failed_cleanly(result, f"s3://{s3_bucket}/store", "report.html", "500")
    listed = s3_client.list_objects_v2(Bucket=s3_bucket, Prefix="store/reports/")
    assert "Contents" not in listed or not any(o["Key"].endswith("manifest.json") for o in listed["Contents"])


def test_store_bucket_that_does_not_exist(s3_env: str) -> None:
    result = in_process(
        "s3://no-such-bucket-here/store",
        GT_DATASET=str(EXAMPLES / "gt.json"),
        PRED_DATASET=str(EXAMPLES / "predictions.jsonl"),
    )
    assert_failed_cleanly(result, "no-such-bucket-here")


def test_endpoint_down_names_the_endpoint(endpoint_down: str) -> None:
    result = in_process("s3://bucket/s", GT_DATASET="s3://bucket/gt.json", PRED_DATASET="s3://bucket/p.json")
    assert_failed_cleanly(result, "s3://bucket/gt.json")


@pytest.mark.parametrize("missing", ["s3://{bucket}/nothing.json", "ds_missing"])
def test_missing_dataset_in_s3_is_one_line(s3_bucket: str, missing: str) -> None:
    result = in_process(
        f"s3://{s3_bucket}/store",
        GT_DATASET=missing.format(bucket=s3_bucket),
        PRED_DATASET=str(EXAMPLES / "gt.json"),
    )
    assert_failed_cleanly(result)


def counts_of(result: subprocess.CompletedProcess[str], store: str) -> dict[str, int]:
    shown = cli("show", outputs_of(result)["REPORT_ID"], "--json", "--store", store)
    counts: dict[str, int] = json.loads(shown.stdout)["counts"]
    return counts


def prediction_cache_of(gt: dict[str, Any], predictions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The native predictions as a prediction cache: normalised boxes, a probability vector each."""
    classes = sorted({a["label"] for asset in gt["assets"] for a in asset["annotations"]})
    cache = []
    for asset in predictions:
        boxes = []
        for box in asset["annotations"]:
            if box["label"] not in classes:
                continue
            probabilities = [0.0] * len(classes)
            probabilities[classes.index(box["label"])] = box.get(
                "confidence", box.get("tags", {}).get("confidence-model")
            )
            w, h = asset["width"], asset["height"]
            boxes.append(
                {
                    "x_min": box["x_min"] / w,
                    "x_max": box["x_max"] / w,
                    "y_min": box["y_min"] / h,
                    "y_max": box["y_max"] / h,
                    "probabilities": probabilities,
                }
            )
        cache.append({"predicted_bounding_boxes": boxes})
    return cache


def test_prediction_cache_from_s3_counts_like_the_native_predictions(
    s3_bucket: str, s3_client: Any, tmp_path: Path
) -> None:
    gt = json.loads((EXAMPLES / "gt.json").read_text())
    lines = (EXAMPLES / "predictions.jsonl").read_text().splitlines()
    predictions = [json.loads(line) for line in lines]
    known = {a["label"] for asset in gt["assets"] for a in asset["annotations"]}
    kept = [{**p, "annotations": [a for a in p["annotations"] if a["label"] in known]} for p in predictions]
    native = tmp_path / "kept.jsonl"
    native.write_text("".join(json.dumps(p) + "\n" for p in kept))
    cache = tmp_path / "cache.jsonl"
    cache.write_text("".join(json.dumps(c) + "\n" for c in prediction_cache_of(gt, kept)))
    store = f"s3://{s3_bucket}/store"
    gt_uri = upload(s3_client, s3_bucket, "data/gt.json", EXAMPLES / "gt.json")
    cache_uri = upload(s3_client, s3_bucket, "data/cache.jsonl", cache)
    remote = counts_of(in_process(store, GT_DATASET=gt_uri, PRED_DATASET=cache_uri), store)
    local = counts_of(
        in_process(store, GT_DATASET=str(EXAMPLES / "gt.json"), PRED_DATASET=str(native)), store
    )
    assert remote == local and remote["total"] > 100


def test_cartucho_text_folders_from_s3_count_like_local(s3_bucket: str, s3_client: Any) -> None:
    folder = THIRD_PARTY / "cartucho_mAP_85" / "input"
    files = [
        (f"cartucho/{side}/{file.name}", file)
        for side in ("ground-truth", "detection-results")
        for file in sorted((folder / side).glob("*.txt"))
    ]
    put_files(s3_client, s3_bucket, files)
    store = f"s3://{s3_bucket}/store"
    remote = counts_of(
        in_process(
            store,
            GT_DATASET=f"s3://{s3_bucket}/cartucho/ground-truth/",
            PRED_DATASET=f"s3://{s3_bucket}/cartucho/detection-results/",
        ),
        store,
    )
    local = counts_of(
        in_process(
            store, GT_DATASET=str(folder / "ground-truth"), PRED_DATASET=str(folder / "detection-results")
        ),
        store,
    )
    assert remote == local and remote["total"] >= 686
