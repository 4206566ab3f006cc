"""The Dockerfile: built and run on the shipped example when a Docker daemon is available, and
always checked by running its own `pip install` and ENTRYPOINT lines in a fresh virtual env
(made in the background while the rest of the run goes on: helpers/dockerfile.py).
"""

from __future__ import annotations

import json
import re
import shutil
import uuid
from pathlib import Path

import pytest
from helpers.dockerfile import (
    DOCKERFILE,
    EXAMPLE_INPUTS,
    IMAGE_CHECKOUT,
    ROOT,
    Dockerfile,
    Venv,
    clean_environment,
    run,
)


@pytest.fixture(scope="module")
def dockerfile() -> Dockerfile:
    return Dockerfile.read(DOCKERFILE)


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


def test_entrypoint_help_runs_in_a_fresh_venv(dockerfile: Dockerfile, dockerfile_venv: Venv) -> None:
    program, *arguments = dockerfile.entrypoint()
    assert program == "python"
    answer = run(
        [str(dockerfile_venv.python), *arguments, "--help"],
        cwd=dockerfile_venv.workdir,
        timeout=120,
        env=clean_environment(),
    )
    assert answer.returncode == 0, answer.stderr
    assert "usage:" in answer.stdout


def test_the_venv_runs_the_installed_package_without_dev_dependencies(dockerfile_venv: Venv) -> None:
    probe = (
        "import handler, importlib.util as u; print(handler.__file__); print(u.find_spec('pytest') is None)"
    )
    answer = run(
        [str(dockerfile_venv.python), "-c", probe],
        cwd=dockerfile_venv.workdir,
        timeout=60,
        env=clean_environment(),
    )
    location, no_pytest = answer.stdout.split()
    assert Path(location).is_relative_to(dockerfile_venv.python.parent.parent), location
    assert no_pytest == "True", "dev dependencies leaked into the install"


def test_the_installed_package_carries_its_kernels_built(dockerfile_venv: Venv) -> None:
    """The wheel's build hook compiled the C kernels into it: the image removes its compiler after
    the install, so loading them must need none."""
    probe = "from handler.kernels import library; print(library()._name)"
    env = clean_environment(CC="no-such-compiler", PATH="/nonexistent")
    answer = run([str(dockerfile_venv.python), "-c", probe], cwd=dockerfile_venv.workdir, timeout=60, env=env)
    assert answer.returncode == 0, answer.stderr
    assert Path(answer.stdout.strip()).is_relative_to(dockerfile_venv.python.parent.parent / "lib")


def test_entrypoint_runs_the_example_in_a_fresh_venv(dockerfile: Dockerfile, dockerfile_venv: Venv) -> None:
    _, *arguments = dockerfile.entrypoint()
    inputs = {key: str(ROOT / path) for key, path in EXAMPLE_INPUTS.items()}
    env = clean_environment(**inputs)
    env.pop("PRELABEL_STORE", None)
    answer = run([str(dockerfile_venv.python), *arguments], cwd=dockerfile_venv.workdir, timeout=300, env=env)
    assert answer.returncode == 0, answer.stderr
    outputs = outputs_of(answer.stdout)
    assert (dockerfile_venv.workdir / "prelabel-store" / "reports" / outputs["REPORT_ID"]).is_dir()


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
    if reason is not None:  # a skip under CI too: CI has no Docker daemon nor registry (helpers/needs.py)
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


def test_prelabel_eval_is_the_api_whatever_the_working_folder_holds(
    dockerfile_venv: Venv, tmp_path: Path
) -> None:
    """A `handler.py` of the user's own shadows `import handler` there; `prelabel_eval` it cannot."""
    (tmp_path / "handler.py").write_text('raise SystemExit("the user\'s own handler.py")\n')
    probe = (
        "from prelabel_eval import load_records, PrelabelingEfficiency; import handler; "
        "print(handler.__file__)"
    )
    answer = run(
        [str(dockerfile_venv.python), "-c", probe], cwd=tmp_path, timeout=120, env=clean_environment()
    )
    assert answer.returncode == 0, answer.stderr
    assert Path(answer.stdout.strip()).is_relative_to(dockerfile_venv.python.parent.parent)
    inputs = {key: str(ROOT / path) for key, path in EXAMPLE_INPUTS.items()}
    env = clean_environment(**inputs, PRELABEL_STORE=str(tmp_path / "store"))
    node = run([str(dockerfile_venv.python), "-m", "prelabel_eval", "-q"], cwd=tmp_path, timeout=300, env=env)
    assert node.returncode == 0, node.stderr
    assert outputs_of(node.stdout)["EFFICIENCY_LEVEL"] == "Partial assist"
