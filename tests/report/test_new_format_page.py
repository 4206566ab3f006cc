"""A new format reaches the page with nothing else to change: the throwaway CSV format of
tests/helpers/csv_format.py, registered, gives the same findings and page as the same boxes
in the native format (but for the datasets' names and formats) and lists its own skips."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.builders import annotation, asset, write_json, write_tree
from helpers.csv_format import csv_line, register

from handler.inputs import parse_inputs
from handler.pipeline import run
from handler.report.findings.model import Findings
from handler.report.page.html import render_html
from handler.storage.local import LocalStore

SIZE = (100.0, 100.0)
# (asset, label, corners, confidence): a GT box and a prediction for each asset.
GT = [("a.jpg", "car", (10, 10, 50, 50), None), ("b.jpg", "dog", (20, 20, 60, 60), None)]
# The last prediction has x_max < x_min: skipped, counted and listed, in either format.
PRED = [
    ("a.jpg", "car", (12, 10, 50, 52), 0.9),
    ("b.jpg", "car", (20, 20, 60, 60), 0.8),
    ("b.jpg", "dog", (60, 20, 20, 60), 0.7),
]


def _csv(folder: Path, boxes: list[Any]) -> Path:
    def values(xyxy: tuple[float, ...], confidence: float | None) -> list[str]:
        return [f"{v:g}" for v in xyxy] + ([] if confidence is None else [f"{confidence:g}"])

    lines = [csv_line(name, SIZE, label, values(xyxy, c)) for name, label, xyxy, c in boxes]
    return write_tree(folder, {"boxes.csv": "".join(lines)})


def _native(path: Path, boxes: list[Any]) -> Path:
    assets = {name: asset(name, []) for name, *_ in boxes}
    for name, label, xyxy, confidence in boxes:
        assets[name]["annotations"].append(annotation((label, *xyxy), confidence))
    return write_json(path, list(assets.values()))


def _findings(tmp_path: Path, gt: Path, pred: Path) -> Findings:
    inputs = parse_inputs({"GT_DATASET": str(gt), "PRED_DATASET": str(pred)})
    return run(inputs, LocalStore(tmp_path / "store")).findings


def _comparable(findings: Findings) -> dict[str, Any]:
    """What must not depend on the format: all but the datasets' names and formats, and the run."""
    document = findings.model_dump(mode="json")
    for key in ("report_id", "created_at", "execution"):
        document.pop(key)
    document["skipped"].pop("listed")  # where a skip was written is the format's own
    for key in ("gt_source", "pred_source", "gt_read_as", "pred_read_as"):
        document["dataset"].pop(key)
    return document


def test_a_registered_format_reaches_the_findings_and_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    csv = register(monkeypatch).name
    as_csv = _findings(tmp_path, _csv(tmp_path / "gt", GT), _csv(tmp_path / "pred", PRED))
    native_pred = _native(tmp_path / "pred.json", PRED)
    as_native = _findings(tmp_path, _native(tmp_path / "gt.json", GT), native_pred)
    assert (as_csv.dataset.gt_format, as_csv.dataset.pred_format) == (csv, csv)
    assert _comparable(as_csv) == _comparable(as_native)
    page = render_html(as_csv)
    assert "line 3: x_max &lt; x_min" in page and 'data-field="images">2<' in page
