"""The node run in-process with its own environment, stdout and stderr captured (no fixtures,
so hypothesis can call it once per example)."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from handler.__main__ import main


@dataclass(frozen=True)
class NodeRun:
    code: int
    out: str
    err: str

    @property
    def messages(self) -> list[str]:
        """stderr without the phase timings."""
        return [line for line in self.err.splitlines() if not line.startswith("[prelabel]")]

    @property
    def outputs(self) -> dict[str, Any]:
        document: dict[str, Any] = json.loads(self.out.strip().splitlines()[-1])
        return document


def run_node(store: Path | str, **inputs: str) -> NodeRun:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.simplefilter("always")  # a warning that escapes the node lands on the captured stderr
        code = main(["--store", str(store)], environ=inputs)
    return NodeRun(code, out.getvalue(), err.getvalue())


def one_error_line(run: NodeRun) -> str:
    """The run failed as a user's mistake: exit 2, one `error:` line, nothing else."""
    assert run.code == 2, (run.code, run.err[-2000:])
    assert len(run.messages) == 1 and run.messages[0].startswith("error: "), run.err[-2000:]
    assert "Traceback" not in run.err and "Warning" not in run.err
    return run.messages[0]


@dataclass(frozen=True)
class CliRun:
    """`prelabel-eval ARGS` run in this process: its exit code, stdout as bytes, stderr as text."""

    returncode: int
    stdout: bytes
    stderr: str


def run_cli(*args: str) -> CliRun:
    """The CLI in-process, stdout captured as bytes (a part printed as stored may be binary) and
    stderr as text: the cost of a subprocess's start, without its isolation (use a subprocess where
    the interpreter itself is the subject)."""
    from handler.cli import main as cli_main

    raw, err = io.BytesIO(), io.StringIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(list(args))
    out.flush()
    return CliRun(code, raw.getvalue(), err.getvalue())


def cli_as_text(*args: str) -> subprocess.CompletedProcess[str]:
    """`run_cli` shaped as `subprocess.run(..., text=True)` gives it, for a test written for one."""
    run = run_cli(*args)
    return subprocess.CompletedProcess(list(args), run.returncode, run.stdout.decode(), run.stderr)
