"""`--version`, `-q` / `-v` through the "prelabel" logger, and where the summary says the page is."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import EXAMPLES, ROOT

from handler.cli import main as cli_main
from handler.inputs import parse_inputs
from handler.pipeline import PHASES, log_to_stderr, run
from handler.runtime import package_version
from handler.storage import open_store

EXAMPLE = {"GT_DATASET": str(EXAMPLES / "gt.json"), "PRED_DATASET": str(EXAMPLES / "predictions.jsonl")}


def _node(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **EXAMPLE, "PYTHONPATH": str(ROOT), "PRELABEL_STORE": str(tmp_path / "store")}
    command = [sys.executable, "-m", "handler", *args]
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("program", [["-m", "handler"], ["-m", "handler.cli"]])
def test_version(program: list[str]) -> None:
    answer = subprocess.run(
        [sys.executable, *program, "--version"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert answer.returncode == 0 and answer.stdout.strip().endswith(package_version())


def test_node_logs_one_line_per_phase_by_default_none_with_q_detail_with_v(tmp_path: Path) -> None:
    default = _node(tmp_path).stderr.splitlines()
    assert [line.split(":")[0] for line in default] == [f"[prelabel] {phase}" for phase in PHASES]
    assert all(line.endswith(" s") for line in default)
    assert _node(tmp_path, "-q").stderr == ""
    verbose = _node(tmp_path, "-v").stderr.splitlines()
    assert [line.split(":")[0] for line in verbose[: len(PHASES)]] == [f"[prelabel] {p}" for p in PHASES]
    detail = verbose[len(PHASES) :]
    assert detail[0] == "[prelabel] ground truth: " + EXAMPLE["GT_DATASET"] + " (native), 153 objects"
    assert detail[-1].startswith("[prelabel] report: " + str(tmp_path / "store" / "reports" / "rpt_"))


def test_phase_lines_are_records_of_the_prelabel_logger(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="prelabel"):
        run(parse_inputs(EXAMPLE), open_store(str(tmp_path / "store")), log=log_to_stderr)
    records = [r for r in caplog.records if r.name == "prelabel"]
    assert [r.getMessage().split(":")[0] for r in records] == list(PHASES)
    assert {r.levelno for r in records} == {logging.INFO}


def test_cli_is_quiet_by_default_verbose_with_v_and_names_the_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [EXAMPLE["GT_DATASET"], EXAMPLE["PRED_DATASET"], "--store", str(tmp_path / "store")]
    assert cli_main(args) == 0
    out, err = capsys.readouterr()
    assert err == ""
    page = out.splitlines()[-1].split(" at ", 1)[1]
    assert page.endswith("/report.html") and Path(page).is_file()
    assert cli_main([*args, "-v"]) == 0
    assert "[prelabel] match and score: " in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:  # one or the other
        cli_main([*args, "-q", "-v"])
    assert refused.value.code == 2
