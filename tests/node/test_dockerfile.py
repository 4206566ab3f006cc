"""The Dockerfile: built and run on the shipped example when a Docker daemon is available, and
always checked by running its own `pip install` and ENTRYPOINT lines in a fresh virtual env.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
EXAMPLE_INPUTS = {"GT_DATASET": "examples/gt.json", "PRED_DATASET": "examples/predictions.jsonl"}
IMAGE_CHECKOUT = "/src"  # where the Dockerfile copies the checkout
# What a checkout may hold that `COPY .` would also copy but that is no part of the package.
NOT_THE_CHECKOUT = shutil.ignore_patterns(
    ".git",
    ".venv",
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
        return shlex.split(self.installs()[-1])

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


@pytest.fixture(scope="module")
def dockerfile() -> Dockerfile:
    return Dockerfile.read(DOCKERFILE)


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


def outputs_of(stdout: str) -> dict[str, str]:
    outputs = json.loads(stdout.strip().splitlines()[-1])
    assert set(outputs) == {"REPORT_ID", "EFFICIENCY_LEVEL"}, outputs
    return {str(key): str(value) for key, value in outputs.items()}


def test_dockerfile_declares_base_user_and_entrypoint(dockerfile: Dockerfile) -> None:
    assert re.fullmatch(r"python:3\.\d+-slim(-\w+)?", dockerfile.base_image())
    assert dockerfile.all("FROM") == ["${PYTHON_BASE}"]
    users = dockerfile.all("USER")
    assert users and users[-1] not in {"root", "0"}, "the node must not run as root"
    assert dockerfile.entrypoint() == ["python", "-m", "handler"]
    install = dockerfile.pip_install()
    assert install[-1] == "." and not any("[" in word for word in install), "no extras in the image"
    assert "--no-deps" in install, "the dependencies come from their own layer"


def test_dependencies_are_a_cached_layer_before_the_code(dockerfile: Dockerfile) -> None:
    dependencies, package = dockerfile.installs()
    copies_before = [args for word, args in dockerfile.before(dependencies) if word == "COPY"]
    assert copies_before == ["pyproject.toml /src/"], "only pyproject.toml may reach the dependency layer"
    # project.dependencies and the `images` extra (Pillow, for the sketches' pictures) only: the
    # test extra stays out of the image
    assert "['dependencies']" in dependencies and "['optional-dependencies']['images']" in dependencies
    assert "'test'" not in dependencies
    assert "pip install --no-cache-dir -r requirements.txt" in dependencies
    copies_after = [args for word, args in dockerfile.before(package) if word == "COPY"][1:]
    assert copies_after == [f". {IMAGE_CHECKOUT}"], "the code is copied after the dependency layer"


# --- always on: the same install and entry point, in a fresh virtual environment -------------


@dataclass(frozen=True)
class Venv:
    python: Path
    workdir: Path  # outside the checkout, as the image's WORKDIR is


@pytest.fixture(scope="module")
def venv(dockerfile: Dockerfile, tmp_path_factory: pytest.TempPathFactory) -> Venv:
    base = tmp_path_factory.mktemp("dockerfile-venv")
    checkout = base / "src"
    shutil.copytree(ROOT, checkout, ignore=NOT_THE_CHECKOUT)
    created = run([sys.executable, "-m", "venv", str(base / "venv")], cwd=base, timeout=300)
    assert created.returncode == 0, created.stderr
    python = base / "venv" / "bin" / "python"
    # Each installing RUN line as the image's shell runs it, with the venv's `python` and `pip` first
    # on PATH as the image's interpreter is: the dependency layer, then the package.
    path = f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}"
    for command in dockerfile.installs():
        installed = run(["sh", "-c", command], cwd=checkout, timeout=900, env=clean_environment(PATH=path))
        assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    workdir = base / "work"
    workdir.mkdir()
    return Venv(python, workdir)


def test_entrypoint_help_runs_in_a_fresh_venv(dockerfile: Dockerfile, venv: Venv) -> None:
    program, *arguments = dockerfile.entrypoint()
    assert program == "python"
    answer = run(
        [str(venv.python), *arguments, "--help"], cwd=venv.workdir, timeout=120, env=clean_environment()
    )
    assert answer.returncode == 0, answer.stderr
    assert "usage:" in answer.stdout


def test_the_venv_runs_the_installed_package_without_dev_dependencies(venv: Venv) -> None:
    probe = (
        "import handler, importlib.util as u; print(handler.__file__); print(u.find_spec('pytest') is None)"
    )
    answer = run([str(venv.python), "-c", probe], cwd=venv.workdir, timeout=60, env=clean_environment())
    location, no_pytest = answer.stdout.split()
    assert Path(location).is_relative_to(venv.python.parent.parent), location
    assert no_pytest == "True", "dev dependencies leaked into the install"


def test_entrypoint_runs_the_example_in_a_fresh_venv(dockerfile: Dockerfile, venv: Venv) -> None:
    _, *arguments = dockerfile.entrypoint()
    inputs = {key: str(ROOT / path) for key, path in EXAMPLE_INPUTS.items()}
    env = clean_environment(**inputs)
    env.pop("PRELABEL_STORE", None)
    answer = run([str(venv.python), *arguments], cwd=venv.workdir, timeout=300, env=env)
    assert answer.returncode == 0, answer.stderr
    outputs = outputs_of(answer.stdout)
    assert (venv.workdir / "prelabel-store" / "reports" / outputs["REPORT_ID"]).is_dir()


# --- when a Docker daemon can reach the base image: build the image and run the example ------


def docker_unavailable(base_image: str) -> str | None:
    """Why the image cannot be built here, or None when it can."""
    if shutil.which("docker") is None:
        return "no docker command on PATH"
    info = run(["docker", "info"], cwd=ROOT, timeout=60)
    if info.returncode != 0:
        last = (info.stderr.strip().splitlines() or ["docker info failed"])[-1]
        return f"no usable Docker daemon ({last})"
    if run(["docker", "image", "inspect", base_image], cwd=ROOT, timeout=60).returncode == 0:
        return None
    pulled = run(["docker", "pull", base_image], cwd=ROOT, timeout=900)
    if pulled.returncode != 0:
        return f"base image {base_image} is not present and cannot be pulled"
    return None


def test_image_builds_and_runs_the_example(dockerfile: Dockerfile) -> None:
    reason = docker_unavailable(dockerfile.base_image())
    if reason is not None:
        print(f"skipping the Docker build: {reason}")
        pytest.skip(reason)
    tag = f"prelabel-eval-test:{uuid.uuid4().hex[:12]}"
    built = run(["docker", "build", "-t", tag, "."], cwd=ROOT, timeout=1800)
    assert built.returncode == 0, built.stderr[-5000:]
    try:
        user = run(["docker", "run", "--rm", "--entrypoint", "id", tag, "-u"], cwd=ROOT, timeout=120)
        assert user.stdout.strip() not in {"", "0"}, "the image runs as root"
        inputs = [f"--env={key}={IMAGE_CHECKOUT}/{path}" for key, path in EXAMPLE_INPUTS.items()]
        answer = run(["docker", "run", "--rm", *inputs, tag], cwd=ROOT, timeout=600)
        assert answer.returncode == 0, answer.stderr
        outputs_of(answer.stdout)
    finally:
        run(["docker", "image", "rm", "-f", tag], cwd=ROOT, timeout=120)
