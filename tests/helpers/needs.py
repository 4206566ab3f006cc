"""What a test needs of its machine, and what a missing piece does.

On a developer's machine the test is skipped, with the reason in pytest's summary. Under CI
(`CI=true`) it fails instead: `.ci/run` installs everything the tests need, so a missing piece there
is a broken setup, and a skip would prove nothing while looking green. The one exception is
Docker (tests/node/test_dockerfile.py): CI has no Docker daemon and no registry to pull a base image
from, so that test skips there too and says why.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import pytest


def under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}


def missing(reason: str) -> NoReturn:
    """Skip saying why; under CI, fail saying why."""
    if under_ci():
        pytest.fail(f"CI=true, but this test cannot run: {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def module(name: str, why: str) -> ModuleType:
    """The imported module, or `missing` with `why` (say which extra or command installs it)."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        missing(f"{why} ({error})")


def existing(path: Path, what: str) -> Path:
    """`path`, or `missing` naming `what` should be there."""
    if not path.exists():
        missing(f"{what} not found at {path}")
    return path
