"""The Dockerfile, read as the tests check it, and the fresh virtual environment in which its own
`pip install` lines and ENTRYPOINT run (tests/node/test_dockerfile.py).

Making that venv installs the runtime dependencies from the index, with no cache (as the
Dockerfile says): half a minute of waiting on the network. So it is a background job of the run
(helpers/background.py), started as soon as the run has collected a test that uses
`dockerfile_venv`, and that test waits for it at the end of the run.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers.background import collected, finish_job, run_late, start_helper_job, wait_for
from helpers.paths import ROOT

DOCKERFILE = ROOT / "Dockerfile"
EXAMPLE_INPUTS = {"GT_DATASET": "examples/gt.json", "PRED_DATASET": "examples/predictions.jsonl"}
IMAGE_CHECKOUT = "/src"  # where the Dockerfile copies the checkout
# What a checkout may hold that `COPY .` would also copy but that is no part of the package.
NOT_THE_CHECKOUT = shutil.ignore_patterns(
    ".git",
    ".venv*",  # .ci/run's .venv-ci too: as .dockerignore says
    "__pycache__",
    "*.egg-info",
    ".*_cache",
    ".hypothesis",
    ".benchmarks",
    "build",
    "dist",
    "prelabel-store",
    "artifacts",
)


@dataclass(frozen=True)
class Dockerfile:
    instructions: list[tuple[str, str]]  # (KEYWORD, arguments), continuation lines joined

    @classmethod
    def read(cls, path: Path) -> Dockerfile:
        text = re.sub(r"\\\n", " ", path.read_text(encoding="utf-8"))
        instructions = []
        for line in text.splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                keyword, _, arguments = line.strip().partition(" ")
                instructions.append((keyword.upper(), arguments.strip()))
        return cls(instructions)

    def all(self, keyword: str) -> list[str]:
        return [arguments for word, arguments in self.instructions if word == keyword]

    def installs(self) -> list[str]:
        """The RUN lines that install: the dependency layer, then the package."""
        commands = [run for run in self.all("RUN") if "pip install" in run]
        assert len(commands) == 2, f"expected two installing RUN lines (deps, package), found {commands}"
        return commands

    def pip_install(self) -> list[str]:
        """The package's own install (the last one): no dependencies, they have their layer."""
        return shlex.split(pip_steps(self.installs()[-1]))

    def before(self, run: str) -> list[tuple[str, str]]:
        return self.instructions[: self.instructions.index(("RUN", run))]

    def entrypoint(self) -> list[str]:
        (entrypoint,) = self.all("ENTRYPOINT")
        command = json.loads(entrypoint)  # exec form: no shell between the platform and the node
        assert isinstance(command, list)
        return [str(word) for word in command]

    def base_image(self) -> str:
        (argument,) = [arg for arg in self.all("ARG") if arg.startswith("PYTHON_BASE=")]
        return argument.partition("=")[2]


def pip_steps(run: str) -> str:
    """A RUN line without its system packages' steps (the compiler the package's wheel is built
    with, installed and removed in its layer): those are the image's, not a venv's."""
    steps = [step.strip() for step in run.split("&&")]
    return " && ".join(s for s in steps if not s.startswith(("apt-get", "rm -rf /var/lib/apt")))


def run(
    command: list[str], *, cwd: Path, timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def clean_environment(**extra: str) -> dict[str, str]:
    """This process's environment without what would make the venv see this checkout or our venv."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}}
    return {**env, **extra}


VENV_JOB = "dockerfile-venv"
FIXTURE = "dockerfile_venv"
run_late(FIXTURE)


@dataclass(frozen=True)
class Venv:
    python: Path
    workdir: Path  # outside the checkout, as the image's WORKDIR is


def make_venv(base: Path) -> None:
    """The checkout copied as `COPY .` would, a fresh venv, and each installing RUN line run as the
    image's shell runs it, with the venv's `python` and `pip` first on PATH as the image's
    interpreter is: the dependency layer, then the package."""
    checkout = base / "src"
    shutil.copytree(ROOT, checkout, ignore=NOT_THE_CHECKOUT)
    created = run([sys.executable, "-m", "venv", str(base / "venv")], cwd=base, timeout=300)
    if created.returncode != 0:
        raise RuntimeError(created.stderr)
    path = f"{base / 'venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    for command in Dockerfile.read(DOCKERFILE).installs():
        installed = run(
            ["sh", "-c", pip_steps(command)], cwd=checkout, timeout=900, env=clean_environment(PATH=path)
        )
        if installed.returncode != 0:
            raise RuntimeError(f"{command}\n{installed.stdout[-3000:]}{installed.stderr[-3000:]}")
    (base / "work").mkdir()


def pytest_collection_finish(session: pytest.Session) -> None:
    if collected(session, [FIXTURE]):
        start_helper_job(VENV_JOB, "dockerfile")


@pytest.fixture(scope="session")
def dockerfile_venv() -> Venv:
    """The venv the run's background job made (started here if no worker started it)."""
    start_helper_job(VENV_JOB, "dockerfile")
    base = wait_for(VENV_JOB)
    return Venv(base / "venv" / "bin" / "python", base / "work")


if __name__ == "__main__":
    finish_job(VENV_JOB, make_venv)
