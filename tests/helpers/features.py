"""A throwaway feature's fragment beside the real ones, for the tests that prove a feature is a folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import handler.features
import handler.report.page.html


def add_fragment(monkeypatch: pytest.MonkeyPatch, folder: Path, feature: str, fragment: str) -> None:
    """The page's loader finds `feature/fragment.html.j2` (a copy of the features' folder with it)."""
    features = folder / "features"
    shutil.copytree(handler.features.FOLDER, features)
    (features / feature).mkdir()
    (features / feature / "fragment.html.j2").write_text(fragment, encoding="utf-8")
    monkeypatch.setattr(handler.report.page.html, "FEATURES_FOLDER", features)
