"""`--version`, `-q` / `-v` through the "prelabel" logger, and where the summary says the page is."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.builders import write_json
from helpers.paths import EXAMPLES, ROOT

from handler.cli import main as cli_main
from handler.command_line import package_version
from handler.inputs import parse_inputs
from handler.pipeline import PHASES, log_to_stderr, run
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
    *default, recommended = _node(tmp_path).stderr.splitlines()
    assert [line.split(":")[0] for line in default] == [f"[prelabel] {phase}" for phase in PHASES]
    assert all(line.endswith(" s") for line in default)
    # the page's, the summary's: a threshold, or the given kept when no other saves clearly more
    said = r"\[prelabel\] recommended: (pre-label at ≥ |keep the [0-9.]+ given, since )"
    assert re.match(said, recommended), recommended
    assert _node(tmp_path, "-q").stderr == ""
    verbose = _node(tmp_path, "-v").stderr.splitlines()
    assert [line.split(":")[0] for line in verbose[: len(PHASES)]] == [f"[prelabel] {p}" for p in PHASES]
    detail = [line for line in verbose[len(PHASES) :] if "recommended: " not in line]
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


# --- the commands, and mistakes on the command line, through real processes ---

COMMANDS = ("run", "list", "show", "compare", "export", "gc")


def _cli(
    tmp_path: Path, *args: str, stdout: int = subprocess.PIPE, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "handler.cli", *args]
    environment = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PRELABEL_STORE": str(tmp_path / "store"),
        **(env or {}),
    }
    return subprocess.run(
        command, cwd=tmp_path, env=environment, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120
    )


def _one_error_line(answer: subprocess.CompletedProcess[str]) -> str:
    assert answer.returncode == 2 and not answer.stdout, answer
    assert answer.stderr.count("\n") == 1 and answer.stderr.startswith("error: "), answer.stderr
    return answer.stderr


def test_top_level_help_names_every_command(tmp_path: Path) -> None:
    answer = _cli(tmp_path, "--help")
    listed = re.findall(r"^    (\w+) ", answer.stdout.split("commands:", 1)[1], re.M)
    assert answer.returncode == 0 and listed == list(COMMANDS)


@pytest.mark.parametrize(
    ("typed", "meant"), [(["lst"], "list"), (["shw", "latest"], "show"), (["gcc"], "gc")]
)
def test_an_unknown_command_names_the_closest(tmp_path: Path, typed: list[str], meant: str) -> None:
    line = _one_error_line(_cli(tmp_path, *typed))
    assert f"unknown command {typed[0]!r}: did you mean {meant!r}?" in line and "PRED" not in line


def test_a_file_named_like_a_command_is_a_dataset(tmp_path: Path) -> None:
    write_json(tmp_path / "lst", [{"asset_id": "a", "annotations": []}])
    answer = _cli(tmp_path, "lst", EXAMPLE["PRED_DATASET"], "--json")
    assert answer.returncode == 0, answer.stderr
    assert json.loads(answer.stdout)["dataset"]["gt_source"].endswith("lst")


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--confidence-threshold", "50%", "'50%' is not a number: expected 0 to 1"),
        ("--confidence-threshold", "50", "'50' is outside the range 0 to 1"),
        ("--iou-min", "0.35", "'0.35' is not one of the options 0.10, 0.20, 0.30, 0.40, 0.50"),
        ("--seconds-draw", "-5", "'-5': expected seconds, a number from 0 to 86400"),
        ("--seconds-draw", "1e308", "'1e308': expected seconds, a number from 0 to 86400"),
        ("--workers", "many", "expected a positive whole number"),
    ],
)
def test_a_bad_option_is_one_line_naming_it(tmp_path: Path, option: str, value: str, says: str) -> None:
    line = _one_error_line(_cli(tmp_path, EXAMPLE["GT_DATASET"], EXAMPLE["PRED_DATASET"], option, value))
    assert option in line and says in line, line
    assert not (tmp_path / "store" / "reports").exists()


@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        (["list", "--store", "ftp://x"], {}, "--store: 'ftp://x': unsupported storage scheme"),
        (["list"], {"PRELABEL_STORE": "ftp://y"}, "$PRELABEL_STORE: 'ftp://y': unsupported storage scheme"),
        (["gc", "--older-than", "5y"], {}, "--older-than '5y': expected a duration"),
    ],
)
def test_a_bad_store_or_duration_names_where_it_came_from(
    tmp_path: Path, args: list[str], env: dict[str, str], says: str
) -> None:
    assert says in _one_error_line(_cli(tmp_path, *args, env=env))


def test_the_node_names_an_outputs_file_it_cannot_write(tmp_path: Path) -> None:
    line = _node(tmp_path, "-q", "--outputs", str(tmp_path / "missing" / "outputs.json")).stderr
    assert (
        line.count("\n") == 1 and line.startswith("error: --outputs: ") and "cannot write the outputs" in line
    )


def test_the_node_keeps_the_platforms_rule_for_a_non_number_threshold(tmp_path: Path) -> None:
    env = {**os.environ, **EXAMPLE, "CONFIDENCE_THRESHOLD": "50%", "PYTHONPATH": str(ROOT)}
    answer = subprocess.run(
        [sys.executable, "-m", "handler", "--store", str(tmp_path / "store")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert answer.returncode == 0, answer.stderr
    assert "info: CONFIDENCE_THRESHOLD '50%' is not a number, so 0 was used" in answer.stderr


def test_list_on_an_empty_store_says_so_on_stderr(tmp_path: Path) -> None:
    answer = _cli(tmp_path, "list")
    assert answer.returncode == 0 and answer.stdout == ""
    assert answer.stderr == f"no reports in {tmp_path / 'store'} yet (run prelabel-eval GT PRED first)\n"


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder whose store holds one report."""
    folder = tmp_path_factory.mktemp("stored")
    assert _cli(folder, EXAMPLE["GT_DATASET"], EXAMPLE["PRED_DATASET"], "-q").returncode == 0
    return folder


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["list"], 128 + signal.SIGPIPE),
        (["show", "latest", "--outcomes"], 128 + signal.SIGPIPE),
        ([EXAMPLE["GT_DATASET"], EXAMPLE["PRED_DATASET"], "-q"], 128 + signal.SIGPIPE),
        (["--help"], 0),  # argparse drops a help text it cannot write
    ],
    ids=["list", "show", "run", "help"],
)
def test_a_closed_stdout_ends_quietly(stored: Path, args: list[str], code: int) -> None:
    """The reader is gone before the command writes: every write fails, deterministically."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        answer = _cli(stored, *args, stdout=writer)
    finally:
        os.close(writer)
    assert answer.returncode == code and answer.stderr == ""


def test_the_node_ends_quietly_when_its_stdout_is_closed(tmp_path: Path) -> None:
    reader, writer = os.pipe()
    os.close(reader)
    try:
        env = {**os.environ, **EXAMPLE, "PYTHONPATH": str(ROOT), "PRELABEL_STORE": str(tmp_path / "store")}
        answer = subprocess.run(
            [sys.executable, "-m", "handler", "-q"],
            env=env,
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(writer)
    assert answer.returncode == 128 + signal.SIGPIPE and answer.stderr == ""
    # Nobody could read the REPORT_ID line: the report it would name is withdrawn, none is left.
    reports = tmp_path / "store" / "reports"
    assert not reports.exists() or list(reports.iterdir()) == []


@pytest.mark.parametrize(
    "pipeline",
    [
        "prelabel-eval list | true",
        f"prelabel-eval {EXAMPLE['GT_DATASET']} {EXAMPLE['PRED_DATASET']} -q | head -1",
        "python -m handler -q | head -1",
    ],
)
def test_a_shell_pipeline_that_stops_reading_prints_no_traceback(stored: Path, pipeline: str) -> None:
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        **EXAMPLE,
        "PYTHONPATH": str(ROOT),
        "PRELABEL_STORE": str(stored / "store"),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    answer = subprocess.run(["bash", "-c", pipeline], env=env, capture_output=True, text=True, timeout=120)
    assert answer.returncode == 0 and answer.stderr == "", answer.stderr
