"""Issue 12: staging left by a killed publish is removed by `prelabel-eval gc` and by the next
publish once it is older than the safe age; signals end a run with nothing left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.builders import write_json

from handler.cli import main as cli_main
from handler.report.asset import SAFE_AGE_SECONDS, collect_garbage, parse_duration, publish_report
from handler.storage import Store, open_store

OLD = time.time() - 2 * SAFE_AGE_SECONDS


def _stage(store: Store, report_id: str, names: list[str]) -> None:
    for name in names:
        store.put(f"reports/{report_id}/{name}", b"part", "text/plain")


def _age_local(root: Path) -> None:
    for path in root.rglob("*"):
        os.utime(path, (OLD, OLD))


def test_gc_removes_old_staging_only(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "store"))
    _stage(store, "rpt_dead", ["findings.json", "outcomes/00000.jsonl"])
    (tmp_path / "store" / "reports" / "rpt_dead" / ".report.html.abc.part").write_bytes(b"half")
    publish_report(store, "rpt_done", {"findings": b"{}"})
    _age_local(tmp_path / "store")
    _stage(store, "rpt_live", ["findings.json"])  # a run still writing: young
    deleted = collect_garbage(store, SAFE_AGE_SECONDS)
    assert sorted(deleted) == [
        "reports/rpt_dead/.report.html.abc.part",
        "reports/rpt_dead/findings.json",
        "reports/rpt_dead/outcomes/00000.jsonl",
    ]
    assert store.list("reports/") == [
        "reports/rpt_done/findings.json",
        "reports/rpt_done/manifest.json",
        "reports/rpt_live/findings.json",
    ]
    assert not (tmp_path / "store" / "reports" / "rpt_dead").exists()


def test_the_next_publish_sweeps_old_staging(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "store"))
    _stage(store, "rpt_dead", ["findings.json"])
    _age_local(tmp_path / "store")
    publish_report(store, "rpt_next", {"findings": b"{}"})
    assert store.list("reports/") == ["reports/rpt_next/findings.json", "reports/rpt_next/manifest.json"]


def test_gc_on_s3_removes_parts_without_a_manifest(s3_bucket: str) -> None:
    store = open_store(f"s3://{s3_bucket}/team")
    _stage(store, "rpt_cut", ["findings.json", "report.html"])
    publish_report(store, "rpt_done", {"findings": b"{}"})
    assert collect_garbage(store, SAFE_AGE_SECONDS) == []  # young: could be a live run
    later = time.time() + 2 * SAFE_AGE_SECONDS
    assert collect_garbage(store, SAFE_AGE_SECONDS, now=later) == [
        "reports/rpt_cut/findings.json",
        "reports/rpt_cut/report.html",
    ]
    assert store.list("reports/") == ["reports/rpt_done/findings.json", "reports/rpt_done/manifest.json"]


def test_gc_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = open_store(str(tmp_path / "store"))
    _stage(store, "rpt_dead", ["findings.json"])
    assert cli_main(["gc", "--older-than", "0s", "--store", str(tmp_path / "store")]) == 0
    assert capsys.readouterr().out.startswith("deleted 1 staging objects")
    assert cli_main(["gc", "--older-than", "soon", "--store", str(tmp_path / "store")]) == 2
    assert "expected a duration" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "seconds"), [("90", 90), ("90s", 90), ("30m", 1800), ("24h", 86400), ("7d", 604800)]
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


def _big_dataset(tmp_path: Path) -> Path:
    images = [{"id": i, "file_name": f"{i}.jpg", "width": 640, "height": 480} for i in range(3000)]
    boxes = [
        {"id": n, "image_id": n % 3000, "category_id": 1, "bbox": [n % 600, 10, 30, 30]}
        for n in range(60_000)
    ]
    document = {"images": images, "annotations": boxes, "categories": [{"id": 1, "name": "car"}]}
    return write_json(tmp_path / "gt.json", document)


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_during_a_run_leaves_nothing(tmp_path: Path, signum: int, code: int) -> None:
    gt, store = _big_dataset(tmp_path), tmp_path / "store"
    env = {**os.environ, "GT_DATASET": str(gt), "PRED_DATASET": str(gt), "PYTHONPATH": os.getcwd()}
    for delay in (0.0, 0.3, 0.8):  # reading, evaluating and (on a fast machine) storing
        process = subprocess.Popen(
            [sys.executable, "-m", "handler", "--store", str(store)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert process.stderr is not None
        first = process.stderr.readline()  # the first phase is done: the run is under way
        time.sleep(delay)
        process.send_signal(signum)
        out, rest = process.communicate(timeout=60)
        err = first + rest
        messages = [line for line in err.splitlines() if not line.startswith("[prelabel]")]
        if process.returncode == 0:  # finished before the signal: a complete report
            assert "REPORT_ID" in out
            continue
        assert process.returncode == code, err
        assert len(messages) == 1 and "no report was published" in messages[0], err
        assert "REPORT_ID" not in out and "Traceback" not in err
        reports = store / "reports"
        leftovers = [p for p in reports.rglob("*") if p.is_file()] if reports.exists() else []
        published = {p.parent for p in leftovers if p.name == "manifest.json"}
        assert all(p.parent in published for p in leftovers), leftovers
