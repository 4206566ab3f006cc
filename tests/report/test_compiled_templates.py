"""The compiled templates kept between runs: the same page, compiled once, never a failed render."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jinja2
import pytest
from helpers.paths import EXAMPLES

import handler.report.page.html
from handler.inputs import parse_inputs
from handler.pipeline import run
from handler.report.findings import Findings
from handler.report.page.compiled import CACHE_FOLDER, code_settings
from handler.report.page.html import render_html
from handler.storage.local import LocalStore


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> Findings:
    inputs = parse_inputs(
        {"GT_DATASET": str(EXAMPLES / "gt.json"), "PRED_DATASET": str(EXAMPLES / "predictions.jsonl")}
    )
    return run(inputs, LocalStore(tmp_path_factory.mktemp("store"))).findings


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The names of the templates jinja2 compiles from source, in order."""
    names: list[str] = []
    compile_source = jinja2.Environment.compile

    def counted(self: jinja2.Environment, source: Any, name: str | None = None, *args: Any) -> Any:
        names.append(str(name))
        return compile_source(self, source, name, *args)

    monkeypatch.setattr(jinja2.Environment, "compile", counted)
    yield names


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / CACHE_FOLDER


def test_a_later_run_renders_the_same_page_without_compiling(
    findings: Findings, cache_home: Path, compiled: list[str]
) -> None:
    first = render_html(findings)
    assert "report.html.j2" in compiled
    assert len(list(cache_home.iterdir())) == len(set(compiled))
    compiled.clear()
    assert render_html(findings) == first  # a new jinja2 Environment, as in a new process
    assert compiled == []


def test_an_edited_template_is_compiled_again(
    findings: Findings, cache_home: Path, compiled: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    templates = tmp_path / "report_templates"
    shutil.copytree(handler.report.page.html.resource_path("report_templates"), templates)
    monkeypatch.setattr(handler.report.page.html, "resource_path", lambda relative: tmp_path / relative)
    before = render_html(findings)
    page = templates / "report.html.j2"
    page.write_text(page.read_text(encoding="utf-8") + "<!-- edited -->\n", encoding="utf-8")
    compiled.clear()
    after = render_html(findings)
    assert compiled == ["report.html.j2"]
    assert after == f"{before}\n<!-- edited -->"  # jinja2 drops a template's last newline


def test_an_unusable_cache_still_gives_the_page(
    findings: Findings, cache_home: Path, compiled: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = render_html(findings)
    for entry in cache_home.iterdir():  # cut short, as by a full disk
        entry.write_bytes(entry.read_bytes()[:40])
    compiled.clear()
    assert render_html(findings) == expected
    assert "report.html.j2" in compiled

    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would go")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert render_html(findings) == expected


def test_settings_that_change_the_compiled_code_change_the_key() -> None:
    escaping = jinja2.Environment(autoescape=True)
    assert code_settings(escaping) != code_settings(jinja2.Environment(autoescape=False))
    assert code_settings(escaping) != code_settings(jinja2.Environment(autoescape=True, trim_blocks=True))
    assert code_settings(escaping) == code_settings(jinja2.Environment(autoescape=True))
