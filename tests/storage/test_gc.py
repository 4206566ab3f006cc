"""Staging left by a killed publish is removed by `prelabel-eval gc` and by the next
publish once it is older than the safe age; signals end a run with nothing left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.builders import write_json
from helpers.reports import publish_report

from handler.cli import main as cli_main
from handler.report.publish.asset import SAFE_AGE_SECONDS, collect_garbage, list_reports, parse_duration
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


def _dataset(tmp_path: Path) -> Path:
    """Big enough that reading, scoring and building each take a moment, boxes apart (no
    health-check pairs to count)."""
    images = [{"id": i, "file_name": f"{i}.jpg", "width": 640, "height": 480} for i in range(1500)]
    boxes = [
        {"id": n, "image_id": n % 1500, "category_id": 1, "bbox": [(n // 1500) * 40, 10, 30, 30]}
        for n in range(15_000)
    ]
    document = {"images": images, "annotations": boxes, "categories": [{"id": 1, "name": "car"}]}
    return write_json(tmp_path / "gt.json", document)


def _files(store: Path) -> list[Path]:
    return [p for p in store.rglob("*") if p.is_file()]


def _staging_appears(store: Path) -> bool:
    return any((store / "reports").glob(".staging-*"))


def _report_appears(store: Path) -> bool:
    return any((store / "reports").glob("rpt_*"))


# When the signal is sent: once reading is done (the first phase line), the moment the staging
# folder appears (the shard writes its outcome chunk), the moment the report is moved into place
# (published, but its REPORT_ID not yet printed: a stop then withdraws it).
MOMENTS = {"scoring": None, "staging": _staging_appears, "moved": _report_appears}


def _sigint_as_on_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


SIGNALS = [(signal.SIGTERM, 143), (signal.SIGINT, 130)]
# Every moment in this process; and the staging moment with two pool processes writing chunks
# while the driver cleans up (a race once seen).
RUNS = [(*sent, moment, "1") for sent in SIGNALS for moment in MOMENTS] + [(*SIGNALS[0], "staging", "2")]


@pytest.mark.parametrize(("signum", "code", "moment", "workers"), RUNS)
def test_a_signal_during_a_run_leaves_nothing(
    tmp_path: Path, signum: int, code: int, moment: str, workers: str
) -> None:
    gt, store = _dataset(tmp_path), tmp_path / "store"
    env = {
        **os.environ,
        "GT_DATASET": str(gt),
        "PRED_DATASET": str(gt),
        "PYTHONPATH": os.getcwd(),
        "PRELABEL_WORKERS": workers,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "handler", "--store", str(store)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A background job (`pytest &`, nohup) inherits SIGINT ignored, and Python then never
        # raises KeyboardInterrupt: the child gets the default disposition, as on a terminal.
        preexec_fn=_sigint_as_on_a_terminal,
    )
    assert process.stderr is not None
    first = process.stderr.readline()  # the first phase is done: the run is under way
    reached = MOMENTS[moment]
    while reached is not None and not reached(store) and process.poll() is None:
        time.sleep(0.001)
    process.send_signal(signum)
    out, rest = process.communicate(timeout=60)
    err = first + rest
    if "REPORT_ID" in out:  # finished before the signal (that may have ended the exit): one report
        assert moment == "moved", err
        assert list_reports(open_store(str(store))) == [json.loads(out)["REPORT_ID"]]
        return
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert process.returncode == code, err
    assert len(errors) == 1 and "no report was published" in errors[0], err
    assert "REPORT_ID" not in out and "Traceback" not in err
    # What the run says is true: no folder, no chunk, no report (the published one withdrawn).
    assert not store.exists() or list(store.rglob("*")) in ([], [store / "reports"]), _files(store)
    assert list_reports(open_store(str(store))) == [] if store.exists() else True
