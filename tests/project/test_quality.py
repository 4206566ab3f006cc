"""ruff and mypy are part of the test command, so CI proves them like any other test."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import TEST_CACHE

ROOT = Path(__file__).resolve().parents[2]
MYPY_CACHE = TEST_CACHE / "mypy"


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "-m", "ruff", "check", "handler", "tests", "bench"],
        # its cache beside the tests' others: a fresh clone checks only what changed (17 s -> 4 s)
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            "pyproject.toml",
            "--cache-dir",
            str(TEST_CACHE / "mypy"),
        ],
    ],
    ids=["ruff", "mypy"],
)
def test_static_checks_pass(command: list[str]) -> None:
    assert shutil.which(sys.executable)
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
