"""Every example a user is shown runs: the `examples:` of each `prelabel-eval --help`, and every
`bash` / `python` block of README.md, from the project folder, against a fresh store.

A README block that cannot run here says so in its first line (`# not run by the README test: why`).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest
from helpers.paths import ROOT

from handler.cli import command_parsers, parser

EXEMPT: Final = "# not run by the README test: "
BLOCK: Final = re.compile(r"^```(bash|python)\n(.*?)^```$", re.M | re.S)


def _environment(store: Path) -> dict[str, str]:
    """The test's interpreter first on PATH (its `python`, its `prelabel-eval`), this checkout importable."""
    bin_dir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "PRELABEL_STORE": str(store),
    }


def _help_examples() -> list[str]:
    """The examples of every command's `--help`, in the order the top-level `--help` lists them."""
    lines = []
    for command in command_parsers(parser()).values():
        epilog = command.format_help().split("examples", 1)[1]
        lines += [line.strip() for line in epilog.splitlines() if line.startswith("  prelabel-eval ")]
    return lines


def test_every_help_example_runs(tmp_path: Path) -> None:
    examples = _help_examples()
    assert len(examples) >= 10 and examples[0].startswith("prelabel-eval examples/")
    assert {line.split()[1] for line in examples} >= {"run", "list", "show", "compare", "gc"}
    env = _environment(tmp_path / "store")
    for line in examples:  # in order: the runs first, so `list` and `show latest` have reports
        command = [sys.executable, "-m", "handler.cli", *shlex.split(line)[1:]]
        answer = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert answer.returncode == 0, f"{line}\n{answer.stderr}"
        assert answer.stdout.strip(), line


def readme_blocks() -> list[tuple[str, str]]:
    return [(language, code) for language, code in BLOCK.findall((ROOT / "README.md").read_text("utf-8"))]


def test_exempt_readme_blocks_are_few_and_say_why() -> None:
    exempt = [code for _, code in readme_blocks() if code.startswith(EXEMPT)]
    assert len(exempt) <= 5 and all(len(code.splitlines()[0]) > len(EXEMPT) + 10 for code in exempt)


@pytest.mark.parametrize(
    ("language", "code"),
    [
        pytest.param(lang, code, id=f"{lang}-{i}")
        for i, (lang, code) in enumerate(readme_blocks())
        if not code.startswith(EXEMPT)
    ],
)
def test_readme_block_runs(language: str, code: str, tmp_path: Path) -> None:
    command = ["bash", "-euo", "pipefail", "-c", code] if language == "bash" else [sys.executable, "-c", code]
    env = _environment(tmp_path / "store")
    answer = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert answer.returncode == 0, f"{code}\n{answer.stdout[-2000:]}\n{answer.stderr[-3000:]}"
