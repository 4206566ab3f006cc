"""Every example a user is shown runs: the `examples:` of each `prelabel-eval --help`, and every
`bash` / `python` block of README.md, CONTRIBUTING.md and docs/*.md, from the project folder,
against a fresh store.

A block that cannot run here says so in its first line (`# not run by the README test: why`).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Final

import orjson
import pytest
from helpers.paths import ROOT

from handler.cli import command_parsers, parser

EXEMPT: Final = "# not run by the README test: "
TEST_COMMAND: Final = f"{EXEMPT}it is the test command itself\n"
# Blocks that cannot run here (an install, a Docker daemon, a cluster, hours of benchmark): few.
MAX_EXEMPT: Final = 8
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


def _run(line: str, store: Path) -> None:
    command = [sys.executable, "-m", "handler.cli", *shlex.split(line)[1:]]
    answer = subprocess.run(
        command, cwd=ROOT, env=_environment(store), capture_output=True, text=True, timeout=120
    )
    assert answer.returncode == 0, f"{line}\n{answer.stderr}"
    assert answer.stdout.strip(), line


def _needs_a_report(line: str) -> bool:
    """A command that reads the store's reports (`list`, `show latest`, `export latest`, ...)."""
    return line.split()[1] in command_parsers(parser()) and line.split()[1] not in (
        "run",
        "compare",
        "calibrate",
    )


def test_the_help_examples_cover_every_command() -> None:
    examples = _help_examples()
    assert len(examples) >= 10 and examples[0].startswith("prelabel-eval examples/")
    assert {line.split()[1] for line in examples} >= {"run", "list", "show", "compare", "gc"}


@pytest.fixture(scope="module")
def a_store_with_a_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding the report of the first example, for the examples that read reports."""
    store = tmp_path_factory.mktemp("examples") / "store"
    _run(_help_examples()[0], store)
    return store


@pytest.mark.parametrize("line", _help_examples())
def test_every_help_example_runs(line: str, a_store_with_a_report: Path, tmp_path: Path) -> None:
    """Each example on its own store (so they run side by side): a copy of one holding a report
    for those that read one."""
    store = tmp_path / "store"
    if _needs_a_report(line):
        shutil.copytree(a_store_with_a_report, store)
    _run(line, store)


@dataclass(frozen=True)
class Block:
    """One fenced `bash` / `python` block of a document, and where it is."""

    document: str
    line: int
    language: str
    code: str

    @property
    def exempt(self) -> bool:
        return self.code.startswith(EXEMPT)

    def __str__(self) -> str:
        return f"{self.document}:{self.line} ({self.language})\n{self.code}"


def documents() -> list[str]:
    """The files a user or contributor reads: the README, CONTRIBUTING and every page of the docs site."""
    pages = sorted(f"docs/{page.name}" for page in (ROOT / "docs").glob("*.md"))
    return ["README.md", "CONTRIBUTING.md", *pages]


def blocks(document: str) -> list[Block]:
    text = (ROOT / document).read_text("utf-8")
    return [
        Block(document, text.count("\n", 0, found.start()) + 1, found.group(1), found.group(2))
        for found in BLOCK.finditer(text)
    ]


def all_blocks() -> list[Block]:
    return [block for document in documents() for block in blocks(document)]


def test_exempt_blocks_are_few_and_say_why() -> None:
    exempt = [block for block in all_blocks() if block.exempt]
    assert len(exempt) <= MAX_EXEMPT, "\n\n".join(map(str, exempt))
    for block in exempt:
        assert len(block.code.splitlines()[0]) > len(EXEMPT) + 10, f"say why it cannot run: {block}"


def test_ci_runs_exactly_the_readme_test_command() -> None:
    """`.ci/run`'s last command is the README's test command, character for character."""
    (readme_command,) = [
        block.code.splitlines()[1] for block in blocks("README.md") if block.code.startswith(TEST_COMMAND)
    ]
    ci_lines = (ROOT / ".ci" / "run").read_text("utf-8").splitlines()
    ci_command = [line for line in ci_lines if line.strip() and not line.startswith("#")][-1]
    assert ci_command == readme_command


# One interpreter runs a run of consecutive python blocks, each in a namespace of its own, so the
# suite pays for Python's start and the package's import once per run, not once per block.
PYTHON_RUNNER: Final = """
import sys, traceback, orjson
for where, code in orjson.loads(sys.stdin.buffer.read()):
    try:
        exec(compile(code, where, "exec"), {"__name__": "__main__"})
    except BaseException:
        traceback.print_exc()
        sys.exit(f"failed: {where}")
"""


def _runs(group: list[Block], env: dict[str, str]) -> None:
    """Blocks of one language: each bash block in a shell of its own, python blocks in one interpreter."""
    if group[0].language == "bash":
        commands = [(["bash", "-euo", "pipefail", "-c", block.code], b"", str(block)) for block in group]
    else:
        payload = orjson.dumps([(f"{block.document}:{block.line}", block.code) for block in group])
        commands = [([sys.executable, "-c", PYTHON_RUNNER], payload, "\n\n".join(map(str, group)))]
    for command, stdin, shown in commands:
        answer = subprocess.run(command, input=stdin, cwd=ROOT, env=env, capture_output=True, timeout=300)
        output = (answer.stdout[-2000:] + b"\n" + answer.stderr[-3000:]).decode(errors="replace")
        assert answer.returncode == 0, f"{shown}\n{output}"


@pytest.mark.parametrize("document", [document for document in documents() if blocks(document)])
def test_document_blocks_run(document: str, tmp_path: Path) -> None:
    """Every block that is not exempt runs, in document order, against one fresh store per document."""
    env = _environment(tmp_path / "store")
    runnable = [block for block in blocks(document) if not block.exempt]
    for _, group in groupby(runnable, key=lambda block: block.language):
        _runs(list(group), env)
