"""The per-box ledger: the shards' column chunks, their rows, and `show --outcomes` / `load_outcomes`
in every format holding the same rows as the findings' counts."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from helpers.builders import annotation, asset, write_json
from helpers.cases import THRESHOLDS, hand_case
from helpers.needs import module
from helpers.node_run import CliRun, run_cli

import handler
from handler.boxes import BoxTable
from handler.cli import main as cli_main
from handler.engine import OUTCOMES, evaluate
from handler.engine.evaluation import Evaluation
from handler.engine.gt_errors import suspect_kinds
from handler.engine.ledger import LEDGER_VERSION, LedgerChunk, ledger_chunk, read_ledger_chunk
from handler.engine.npz_chunks import loaded, saved
from handler.engine.pre_label_boxes import ChunkImages
from handler.engine.timecost import ACTIONS
from handler.report.json_lines import Field, Number, Text, json_lines
from handler.report.ledger import COLUMNS
from handler.report.publish import LEDGER, report_chunks
from handler.report.publish.asset import MANIFEST
from handler.storage.local import LocalStore

HOSTILE = "<img src=x onerror=alert(1)>"
QUOTED = "street \"quoted\" \\ 'id' é\n,.jpg"

pq = module("pyarrow.parquet", "the Parquet format of the ledger: the test extra installs pyarrow")


def chunk_of(
    evaluation: Evaluation,
    assets: list[str],
    classes: list[str],
    sizes: tuple[float, float] | None = None,
    normalized: bool = False,
) -> LedgerChunk:
    n = len(assets)
    widths, heights = (
        (np.full(n, np.nan), np.full(n, np.nan))
        if sizes is None
        else (
            np.full(n, sizes[0]),
            np.full(n, sizes[1]),
        )
    )
    images = ChunkImages(assets, classes, widths, heights, normalized)
    return read_ledger_chunk(
        ledger_chunk(evaluation, images, suspect_kinds(evaluation, THRESHOLDS.iou_perfect))
    )


def test_hand_case_rows() -> None:
    """A row per outcome: every GT box (its match beside it), then the image's false positives."""
    gt, pred = hand_case()
    evaluation = evaluate(gt, pred, 2, THRESHOLDS)
    chunk = chunk_of(evaluation, ["a.jpg", "b.jpg"], ["car", "dog", "cat"])
    c = chunk.columns
    assert len(chunk) == len(gt) + 2  # P3 and P4 are false positives; P5, P6 are not kept
    assert c["image"].tolist() == [0] * 7 + [1]
    assert c["gt_index"].tolist() == [0, 1, 2, 3, 4, -1, -1, 5]
    assert c["pred_index"].tolist() == [0, 1, 2, -1, -1, 3, 4, -1]
    assert [OUTCOMES[o] for o in c["outcome"]] == [
        "correct",
        "shifted",
        "class_confused",
        "false_negative",
        "false_negative",
        "false_positive",
        "false_positive",
        "false_negative",
    ]
    assert c["gt_class"].tolist() == [0, 0, 1, 0, 1, -1, -1, 2]
    assert c["pred_class"].tolist() == [0, 0, 2, -1, -1, 0, 0, -1]
    assert c["iou"][:3].tolist() == pytest.approx([1.0, 2 / 3, 1.0])
    assert np.isnan(c["iou"][3:]).all() and np.isnan(c["confidence"][[3, 4, 7]]).all()
    assert c["confidence"][[0, 1, 2, 5, 6]].tolist() == pytest.approx([0.9, 0.8, 0.7, 0.65, 0.6])
    assert c["gt_xywh"][1].tolist() == [20, 20, 10, 10] and c["pred_xywh"][1].tolist() == [20, 20, 10, 15]
    assert np.isnan(c["pred_xywh"][3]).all() and np.isnan(c["gt_xywh"][5]).all()
    assert not c["gt_angle"].any() and not c["fractions"].any()


def test_boxes_in_pixels_where_the_size_is_known_else_in_fractions() -> None:
    gt, pred = hand_case()
    scaled_gt = gt.with_columns(xyxy=gt.xyxy / 200)
    scaled_pred = pred.with_columns(xyxy=pred.xyxy / 200)
    evaluation = evaluate(scaled_gt, scaled_pred, 2, THRESHOLDS)
    known = chunk_of(evaluation, ["a", "b"], ["car", "dog", "cat"], (200.0, 200.0), normalized=True)
    assert known.columns["gt_xywh"][1].tolist() == pytest.approx([20, 20, 10, 10])
    assert not known.columns["fractions"].any()
    unknown = chunk_of(evaluation, ["a", "b"], ["car", "dog", "cat"], None, normalized=True)
    assert unknown.columns["gt_xywh"][1].tolist() == pytest.approx([0.1, 0.1, 0.05, 0.05])
    assert unknown.columns["fractions"].all()


def _random_case(seed: int) -> tuple[BoxTable, BoxTable, int]:
    rng = np.random.default_rng(seed)
    n_gt, n_pred, n_images = 3000, 3500, 200
    corners = rng.uniform(0, 500, (n_gt, 2))
    gt = BoxTable.build(
        np.hstack([corners, corners + rng.uniform(5, 60, (n_gt, 2))]),
        rng.integers(0, 4, n_gt),
        rng.integers(0, n_images, n_gt),
        source_index=rng.permutation(n_gt) + 100,
        angle=np.where(rng.random(n_gt) < 0.2, rng.uniform(-90, 90, n_gt), 0.0),
    )
    source = rng.integers(0, n_gt, n_pred)
    pred = BoxTable.build(
        gt.xyxy[source] + rng.normal(0, 4, (n_pred, 4)),
        rng.integers(0, 4, n_pred),
        gt.image[source],
        confidence=rng.uniform(0, 1, n_pred),
        angle=gt.angle[source],
    )
    return gt, pred, n_images


def test_random_evaluation_rows_are_the_engines() -> None:
    gt, pred, n_images = _random_case(7)
    evaluation = evaluate(gt, pred, n_images, THRESHOLDS)
    chunk = chunk_of(evaluation, [f"{QUOTED}{i}" for i in range(n_images)], [HOSTILE, "car", "日本", 'a "b"'])
    c = chunk.columns
    counts = evaluation.tally.count_dict()
    assert Counter(OUTCOMES[o] for o in c["outcome"]) == {k: counts[k] for k in OUTCOMES if counts[k]}
    assert len(chunk) == len(gt) + counts["false_positive"]
    assert np.all(np.diff(c["image"]) >= 0)
    gt_rows = c["gt_index"] >= 0
    assert sorted(c["gt_index"][gt_rows].tolist()) == sorted(gt.source_index.tolist())
    # each row's boxes are the input's (float32), angles included; IoU the engine's bit for bit
    by_source = np.argsort(gt.source_index)
    rows = by_source[np.searchsorted(gt.source_index[by_source], c["gt_index"][gt_rows])]
    xyxy = gt.xyxy[rows]
    assert np.allclose(c["gt_xywh"][gt_rows], np.hstack((xyxy[:, :2], xyxy[:, 2:] - xyxy[:, :2])), atol=1e-3)
    assert np.allclose(c["gt_angle"][gt_rows], gt.angle[rows], atol=1e-4)
    matched = evaluation.outcomes.match.pred_iou[~np.isnan(evaluation.outcomes.match.pred_iou)]
    assert sorted(c["iou"][~np.isnan(c["iou"])].tolist()) == sorted(matched.tolist())
    assert (c["suspect"] >= 0).sum() == (suspect_kinds(evaluation, THRESHOLDS.iou_perfect) >= 0).sum()


def test_a_damaged_or_later_chunk_is_refused() -> None:
    gt, pred = hand_case()
    content = ledger_chunk(
        evaluate(gt, pred, 2, THRESHOLDS),
        ChunkImages(["a", "b"], ["car", "dog", "cat"], np.full(2, np.nan), np.full(2, np.nan), False),
        np.full(5, -1),
    )
    with pytest.raises(ValueError, match="damaged chunk"):
        read_ledger_chunk(content[: len(content) // 2])
    later = {**loaded(content), "version": np.array(LEDGER_VERSION + 1)}
    with pytest.raises(ValueError, match=f"ledger layout {LEDGER_VERSION + 1}"):
        read_ledger_chunk(saved(later))


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (saved({"image": np.arange(3)}), "no layout version: not a ledger chunk"),
        (saved({"version": np.arange(3)}), "no layout version: not a ledger chunk"),
        (b"\x93NUMPY\x01\x00", "not an .npz"),
        (b"hello", "not an .npz"),
    ],
    ids=["npz of other columns", "version not a number", "npy", "text"],
)
def test_a_chunk_that_is_not_a_ledger_chunk_says_so(content: bytes, expected: str) -> None:
    with pytest.raises(ValueError, match=f"damaged chunk \\({expected}"):
        read_ledger_chunk(content)


def test_json_lines_equals_orjson_per_record() -> None:
    fields: dict[str, Field] = {
        "name": Text(["x", HOSTILE], np.array([1, -1, 0])),
        "n": Number(np.array([3, -1, 5]), np.array([False, True, False])),
        "f": Number(np.array([0.1, np.nan, 1e-7])),
        "b": Number(np.array([True, False, True])),
    }
    records = [
        {"name": HOSTILE, "n": 3, "f": 0.1, "b": True},
        {"name": None, "n": None, "f": None, "b": False},
        {"name": "x", "n": 5, "f": 1e-7, "b": True},
    ]
    assert json_lines(fields, np.arange(3)) == b"".join(orjson.dumps(r) + b"\n" for r in records)
    assert (
        json_lines(fields, np.array([2, 0]))
        == orjson.dumps(records[2]) + b"\n" + orjson.dumps(records[0]) + b"\n"
    )
    assert json_lines({"n": Number(np.empty(0, dtype=np.int64))}, np.arange(0)) == b""


def test_json_lines_in_chunks_are_the_lines_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Adjacent text fields (the last one too) are one piece of a line; chunks do not show."""
    rng = np.random.default_rng(5)
    names, kinds = ["a", "b", HOSTILE], ["x", 'y "z"']
    fields: dict[str, Field] = {
        "name": Text(names, rng.integers(-1, 3, 11)),
        "n": Number(rng.integers(-5, 5, 11), rng.random(11) < 0.3),
        "first": Text(names, rng.integers(-1, 3, 11)),
        "second": Text(kinds, rng.integers(-1, 2, 11)),
    }
    order = rng.permutation(11)

    def value(field: Field, line: int) -> object:
        if isinstance(field, Text):
            return None if field.index[line] < 0 else field.values[field.index[line]]
        return None if field.null is not None and field.null[line] else field.values[line].item()

    records = [{key: value(field, line) for key, field in fields.items()} for line in order.tolist()]
    whole = json_lines(fields, order)
    assert whole == b"".join(orjson.dumps(record) + b"\n" for record in records)
    monkeypatch.setattr(sys.modules["handler.report.json_lines"], "CHUNK_LINES", 4)
    assert json_lines(fields, order) == whole


def _cli(store: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert cli_main([*args, "--store", str(store)]) == 0
    return capsys.readouterr().out


def _show_bytes(store: Path, report_id: str, *args: str, check: bool = True) -> CliRun:
    shown = run_cli("show", report_id, "--outcomes", *args, "--store", str(store))
    assert shown.returncode == 0 or not check, shown.stderr
    return shown


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A run on text that must survive every format: quotes, commas, a newline, markup."""
    folder = tmp_path_factory.mktemp("ledger")
    gt = write_json(
        folder / "gt.json",
        [
            asset(QUOTED, [annotation((HOSTILE, 0, 0, 10, 10)), annotation(("car", 50, 50, 60, 60))]),
            asset("b.jpg", [annotation(("car", 5, 5, 40, 40)), annotation((HOSTILE, 60, 60, 90, 90))]),
        ],
    )
    pred = write_json(
        folder / "pred.json",
        [
            asset(QUOTED, [annotation((HOSTILE, 0, 0, 10, 9), 0.9), annotation(("car", 80, 0, 99, 20), 0.7)]),
            asset(
                "b.jpg", [annotation(("car", 6, 5, 40, 44), 0.8), annotation(("car", 60, 60, 90, 90), 0.95)]
            ),
        ],
    )
    store = folder / "store"
    findings = json.loads(run_cli(str(gt), str(pred), "--json", "--store", str(store)).stdout)
    return store, findings


def _rounded(values: Any) -> Any:
    """Floats to 6 significant digits (float32 boxes read back as float64 show their float32 noise)."""
    if isinstance(values, dict):
        return {key: _rounded(value) for key, value in values.items()}
    if isinstance(values, list):
        return [_rounded(value) for value in values]
    return float(f"{values:.6g}") if isinstance(values, float) else values


def _as_json(name: str, value: Any) -> Any:
    """A value of `load_outcomes` as the JSON lines hold it: None for NaN and for index -1."""
    if (isinstance(value, float) and np.isnan(value)) or (name.endswith("_index") and value == -1):
        return None
    return value


def test_every_format_holds_the_same_rows(hostile_report: tuple[Path, dict[str, Any]]) -> None:
    store, findings = hostile_report
    report_id = findings["report_id"]
    jsonl = [json.loads(line) for line in _show_bytes(store, report_id).stdout.splitlines()]
    assert Counter(row["outcome"] for row in jsonl) == {
        k: v for k, v in findings["counts"].items() if k in OUTCOMES and v
    }
    assert all(list(row) == list(COLUMNS) for row in jsonl)
    assert all(row["action"] == ACTIONS[OUTCOMES.index(row["outcome"])] for row in jsonl)
    assert {row["asset_id"] for row in jsonl} == {QUOTED, "b.jpg"}
    assert {row["units"] for row in jsonl} == {"pixels"}

    text = _show_bytes(store, report_id, "--format", "csv").stdout.decode("utf-8")
    read = list(csv.DictReader(io.StringIO(text)))
    assert len(read) == len(jsonl)
    for row, line in zip(read, jsonl, strict=True):
        for name in COLUMNS:
            value = line[name]
            expected = "" if value is None else json.dumps(value) if isinstance(value, bool) else str(value)
            assert row[name] == expected, name

    parquet = pq.read_table(io.BytesIO(_show_bytes(store, report_id, "--format", "parquet").stdout))
    assert parquet.column_names == list(COLUMNS)
    assert parquet.to_pylist() == [
        {k: (pytest.approx(v, rel=1e-6) if isinstance(v, float) else v) for k, v in line.items()}
        for line in jsonl
    ]

    columns = handler.load_outcomes(report_id, store=str(store))
    assert list(columns) == list(COLUMNS)
    for name in COLUMNS:
        loaded_values = [_as_json(name, value) for value in columns[name].tolist()]
        assert _rounded(loaded_values) == _rounded([line[name] for line in jsonl]), name


def test_an_empty_report_prints_no_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    gt = write_json(tmp_path / "gt.json", [asset("a", [])])
    pred = write_json(tmp_path / "pred.json", [asset("b", [])])
    report_id = json.loads(_cli(store, capsys, str(gt), str(pred), "--json"))["report_id"]
    assert _cli(store, capsys, "show", report_id, "--outcomes") == ""
    assert _cli(store, capsys, "show", report_id, "--outcomes", "--format", "csv") == ",".join(COLUMNS) + "\n"
    assert len(handler.load_outcomes(report_id, store=LocalStore(store))["outcome"]) == 0


def test_a_report_from_before_the_ledger_prints_its_lines(
    hostile_report: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """An older report held `outcomes/00000.jsonl` where the ledger is now: printed as stored."""
    store, findings = hostile_report
    old = tmp_path / "store"
    folder = old / "reports" / findings["report_id"]
    folder.parent.mkdir(parents=True)
    (folder / "outcomes").mkdir(parents=True)
    lines = b'{"asset_id":"a","box":"gt","outcome":"correct"}\n'
    (folder / "outcomes" / "00000.jsonl").write_bytes(lines)
    (folder / "findings.json").write_bytes(
        (store / "reports" / findings["report_id"] / "findings.json").read_bytes()
    )
    manifest = {"report_id": findings["report_id"], "parts": ["outcomes/00000.jsonl", "findings.json"]}
    (folder / MANIFEST).write_bytes(orjson.dumps(manifest))
    assert _show_bytes(old, findings["report_id"]).stdout == lines
    refused = _show_bytes(old, findings["report_id"], "--format", "csv", check=False)
    assert refused.returncode == 2
    assert refused.stderr.strip().endswith(
        "stored before the ledger, with JSON lines only: use --format jsonl"
    )


def test_a_damaged_ledger_chunk_is_one_error_line(
    hostile_report: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    store, findings = hostile_report
    copy = tmp_path / "store"
    subprocess.run(["cp", "-r", str(store), str(copy)], check=True)
    chunk = copy / "reports" / findings["report_id"] / LEDGER.chunk(0)
    chunk.write_bytes(chunk.read_bytes()[:100])
    shown = _show_bytes(copy, findings["report_id"], check=False)
    assert shown.returncode == 2 and shown.stdout == b""
    (line,) = shown.stderr.splitlines()
    assert line.startswith("error:") and "ledger chunk 0: damaged chunk" in line


def test_parquet_without_pyarrow_names_the_extra(hostile_report: tuple[Path, dict[str, Any]]) -> None:
    store, findings = hostile_report
    blocked = (
        "import sys; sys.modules['pyarrow'] = None; from handler.cli import main; "
        f"sys.exit(main(['show', {findings['report_id']!r}, '--outcomes', '--format', 'parquet', "
        f"'--store', {str(store)!r}]))"
    )
    shown = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True)
    assert shown.returncode == 2 and shown.stdout == ""
    assert shown.stderr.strip() == (
        "error: --format parquet needs pyarrow: pip install 'evaluate-prelabeling-efficiency[parquet]'"
    )
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    assert "\nparquet = [" in pyproject


def test_the_stored_chunks_are_one_per_shard(hostile_report: tuple[Path, dict[str, Any]]) -> None:
    store, findings = hostile_report
    chunks = list(report_chunks(LocalStore(store), findings["report_id"], LEDGER))
    assert len(chunks) == findings["execution"]["shards"]


def test_format_is_for_outcomes_only(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert cli_main(["show", "latest", "--json", "--format", "csv", "--store", str(tmp_path)]) == 2
    assert "--format is for --outcomes" in capsys.readouterr().err


def test_show_takes_one_part_only(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli_main(["show", "rpt_x", "--html", "--outcomes"])
    assert "not allowed with argument" in capsys.readouterr().err
