"""A missing piece of a test's setup skips with its reason on a developer's machine and fails under CI."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.needs import existing, module


def test_under_ci_a_missing_piece_fails_naming_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(
        pytest.fail.Exception, match="CI=true, but this test cannot run: the data not found at"
    ):
        existing(tmp_path / "absent", "the data")


def test_elsewhere_a_missing_piece_skips_saying_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"part of an extra .*No module named"):
        module("no_such_module_here", "part of an extra")


def test_what_is_there_is_given_back(tmp_path: Path) -> None:
    assert existing(tmp_path, "the folder") == tmp_path
    assert module("json", "the standard library").__name__ == "json"
