"""Findings match their schema; the page escapes every string that came from a dataset."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.builders import annotation, asset, write_json
from helpers.findings_schema import validate_document
from helpers.reports import publish_report
from pydantic import ValidationError

from handler.errors import StorageError
from handler.inputs import parse_inputs
from handler.pipeline import run
from handler.report.findings import Findings
from handler.report.finishers import REPORT_PARTS
from handler.report.page.html import render_html
from handler.report.publish import latest_report, list_reports, new_report_id, read_report_part
from handler.storage.local import LocalStore

HOSTILE = "<img src=x onerror=alert(1)>"


def run_on(tmp_path: Path, gt: Any, pred: Any, **inputs: str) -> Findings:
    raw = {
        "GT_DATASET": str(write_json(tmp_path / "gt.json", gt)),
        "PRED_DATASET": str(write_json(tmp_path / "pred.json", pred)),
        **inputs,
    }
    return run(parse_inputs(raw), LocalStore(tmp_path / "store")).findings


def test_findings_hold_the_keys_the_widget_reads(tmp_path: Path) -> None:
    findings = run_on(
        tmp_path,
        [asset("a", [annotation(("car", 0, 0, 10, 10))])],
        [asset("a", [annotation(("car", 0, 0, 10, 9), 0.9)])],
    )
    validate_document(findings.document())
    assert findings.document()["kind"] == "dataset_intelligence_findings_v1"
    assert set(findings.document()["counts"]) == {
        "correct",
        "shifted",
        "class_confused",
        "false_positive",
        "false_negative",
        "total",
    }
    assert findings.counts.correct == 1 and findings.mean_iou == pytest.approx(0.9)
    assert findings.document()["reason"] is None


def test_schema_refuses_a_broken_document(tmp_path: Path) -> None:
    findings = run_on(tmp_path, [asset("a", [])], [asset("a", [])])
    with pytest.raises(ValueError, match=r"findings do not match findings\.schema\.json"):
        validate_document({**findings.document(), "efficiency_level": "Great"})
    with pytest.raises(ValidationError, match="efficiency_level"):
        Findings.model_validate({**findings.document(), "efficiency_level": "Great"})


def test_page_escapes_dataset_text(tmp_path: Path) -> None:
    gt = [asset('quote"d <id>', [annotation((HOSTILE, 0, 0, 10, 10))])]
    pred = [asset('quote"d <id>', [{"label": HOSTILE, "x_min": HOSTILE, "y_min": 0, "x_max": 1, "y_max": 1}])]
    findings = run_on(tmp_path, gt, pred, CONFIDENCE_THRESHOLD=HOSTILE)
    page = render_html(findings)
    assert HOSTILE not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<script" not in page and "http" not in page.split("</head>")[1]


def test_page_without_anything_to_score_shows_the_reason_and_no_chart(tmp_path: Path) -> None:
    findings = run_on(tmp_path, [asset("a", [])], [asset("b", [])])
    page = render_html(findings)
    assert "share no image assets" in page and "<svg" not in page and 'class="cards"' not in page


def test_report_is_invisible_until_complete(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    with pytest.raises(KeyError):
        publish_report(store, "rpt_1", {"findings": b"{}", "unknown-part": b"x"})
    with pytest.raises(StorageError, match="no report 'rpt_1'"):
        read_report_part(store, "rpt_1", REPORT_PARTS["findings"])
    assert list(tmp_path.iterdir()) == []  # nothing left behind
    publish_report(store, "rpt_1", {"findings": b"{}", "html": b"<p>"})
    assert read_report_part(store, "rpt_1", REPORT_PARTS["html"]) == b"<p>"
    assert json.loads((tmp_path / "reports" / "rpt_1" / "manifest.json").read_text())["report_id"] == "rpt_1"


def test_the_latest_of_reports_made_in_one_second_is_the_last_made(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    made = [new_report_id() for _ in range(20)]  # well within one second
    for report_id in made:
        publish_report(store, report_id, {"findings": b"{}"})
    assert list_reports(store) == made[::-1]
    assert latest_report(store) == made[-1]


@pytest.mark.parametrize("bad_id", ["../escape", "/abs", "a/b", "..", ".hidden", ""])
def test_ids_that_escape_the_store_are_refused(tmp_path: Path, bad_id: str) -> None:
    store = LocalStore(tmp_path)
    with pytest.raises(StorageError, match="is not a valid id"):
        read_report_part(store, bad_id, REPORT_PARTS["findings"])
    with pytest.raises(StorageError, match="is not a valid id"):
        store.dataset(bad_id)
