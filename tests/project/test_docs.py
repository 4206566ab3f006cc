"""The documentation holds together: the mkdocs site builds with `--strict` (every link and anchor
resolves, every page is in the nav), the README stays a five-minute read, and the README's and
CONTRIBUTING's links reach files that exist.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Final

import orjson
import pytest
from helpers.paths import ROOT

from handler.cli import command_parsers, parser
from handler.datasets import format_names

README_MAX_BYTES: Final = 12 * 1024
# A markdown link or image to a relative path: [text](path) or [text](path#anchor).
LINK: Final = re.compile(r"\]\((?!https?://|#)([^)#\s]+)(?:#[^)\s]*)?\)")
# A project path quoted as code: `handler/report/publish/asset.py`, `tests/node/`, `examples/screenshot.py`.
QUOTED_PATH: Final = re.compile(
    r"`((?:handler|tests|bench|examples|schemas|report_templates|docs|\.ci)/[\w./-]*)`"
)
# A dotted name of the package quoted as code: `handler.mmeval.PrelabelingEfficiencyMetric`.
QUOTED_NAME: Final = re.compile(r"`(handler(?:\.\w+)+)")
# Made by a run, not shipped: the benchmark's work folder.
GENERATED: Final = ("bench/.work",)


def test_the_site_builds_strict(tmp_path: Path) -> None:
    config, site = str(ROOT / "mkdocs.yml"), str(tmp_path / "site")
    answer = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", config, "--site-dir", site],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert answer.returncode == 0, answer.stderr[-4000:]
    assert (tmp_path / "site" / "index.html").is_file()


def test_the_readme_is_at_most_12_kb() -> None:
    size = (ROOT / "README.md").stat().st_size
    assert size <= README_MAX_BYTES, f"README.md is {size} bytes: move detail to a page of docs/"


@pytest.mark.parametrize("document", ["README.md", "CONTRIBUTING.md"])
def test_links_reach_files(document: str) -> None:
    text = (ROOT / document).read_text("utf-8")
    missing = [target for target in LINK.findall(text) if not (ROOT / target).exists()]
    assert not missing, f"{document} links to missing files: {missing}"


def _manual() -> dict[str, str]:
    pages = ["README.md", "CONTRIBUTING.md", *(f"docs/{page.name}" for page in (ROOT / "docs").glob("*.md"))]
    return {page: (ROOT / page).read_text("utf-8") for page in pages}


def test_quoted_paths_exist() -> None:
    """A file or folder the manual names is there: a move (tests/test_browser.py → tests/report/) shows."""
    missing = [
        (page, path)
        for page, text in _manual().items()
        for path in sorted(set(QUOTED_PATH.findall(text)))
        if not path.startswith(GENERATED) and not (ROOT / path).exists()
    ]
    assert not missing, f"the manual names paths that do not exist: {missing}"


def _resolves(dotted: str) -> bool:
    """`handler.a.b.C`: the longest importable module prefix, then attributes for the rest."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        return all((found := getattr(found, name, None)) is not None for name in parts[cut:])
    return False


def test_quoted_names_resolve() -> None:
    names = {name for text in _manual().values() for name in QUOTED_NAME.findall(text)}
    assert sorted(name for name in names if not _resolves(name)) == []


def _first_cells(text: str) -> str:
    """The first cell of every table row: where a table names its formats."""
    return "\n".join(line.split("|")[1] for line in text.splitlines() if line.startswith("| `"))


def test_every_registered_format_is_documented() -> None:
    """A format the node reads has a row in the README's table and in the Formats page's."""
    for page in ("README.md", "docs/formats.md"):
        cells = _first_cells((ROOT / page).read_text("utf-8"))
        missing = [name for name in format_names() if f"`{name}`" not in cells]
        assert not missing, f"{page}: formats without a row in its formats table: {missing}"


def test_every_export_target_is_documented() -> None:
    """An export target has a row in the Usage page's table of targets."""
    from handler.report.exports.targets import EXPORT_TARGETS

    cells = _first_cells((ROOT / "docs/usage.md").read_text("utf-8"))
    missing = [name for name in EXPORT_TARGETS if f"`{name}`" not in cells]
    assert not missing, f"docs/usage.md: export targets without a row: {missing}"


def test_every_warning_code_is_documented() -> None:
    """The warnings a run can raise (the findings schema's enum) each have a row on the Warnings page."""
    schema = orjson.loads((ROOT / "schemas" / "findings.schema.json").read_bytes())
    codes = schema["$defs"]["DataWarning"]["properties"]["code"]["enum"]
    cells = _first_cells((ROOT / "docs" / "warnings.md").read_text("utf-8"))
    assert [code for code in codes if f"`{code}`" not in cells] == []


def test_every_findings_field_is_documented() -> None:
    """Each top-level field of findings.json is named on the Report page, so a new section is explained."""
    schema = orjson.loads((ROOT / "schemas" / "findings.schema.json").read_bytes())
    page = (ROOT / "docs" / "report.md").read_text("utf-8")
    assert [field for field in schema["properties"] if f"`{field}`" not in page] == []


def test_every_command_option_is_documented() -> None:
    """Each long option of each `prelabel-eval` command is named on a page of docs/."""
    pages = "\n".join(text for page, text in _manual().items() if page.startswith("docs/"))
    missing = sorted(
        f"{name} {flag}"
        for name, command in command_parsers(parser()).items()
        for action in command._actions
        for flag in action.option_strings
        if flag.startswith("--") and flag != "--help" and not re.search(rf"(?<![\w-]){flag}(?![\w-])", pages)
    )
    assert not missing, f"options no page of docs/ names: {missing}"


def test_every_command_has_a_row_in_the_usage_table_and_its_own_usage_line() -> None:
    """`prelabel-eval COMMAND` has a row in docs/usage.md's table of commands, its usage line names
    it, and the CLI module's synopsis lists it."""
    cells = _first_cells((ROOT / "docs/usage.md").read_text("utf-8"))
    synopsis = (ROOT / "handler" / "cli.py").read_text("utf-8").split('"""')[1]
    for name, command in command_parsers(parser()).items():
        assert re.search(rf"`prelabel-eval (\[)?{name}\b", cells), f"docs/usage.md: no row for {name}"
        assert command.format_usage().startswith(f"usage: prelabel-eval {name}"), command.format_usage()
        assert re.search(rf"^prelabel-eval (\[)?{name}\b", synopsis, flags=re.MULTILINE), name


# CONTRIBUTING's "Extending": an extension's measured cost, `**N files in M folders**`, and the
# summary's row of it.
COST: Final = re.compile(r"\*\*(\d+) files in (\d+) folders\*\*")
SUMMARY_ROW: Final = re.compile(
    r"^\| \[[^\]]+\]\(#([\w-]+)\) \| (\d+) files in (\d+) folders \|", re.MULTILINE
)


def _extensions() -> dict[str, str]:
    """Each `### A new ...` section of CONTRIBUTING's "Extending", by its anchor."""
    text = (ROOT / "CONTRIBUTING.md").read_text("utf-8")
    sections = text.split("\n## Extending\n", 1)[1].split("\n### ")[1:]
    return {section.split("\n", 1)[0].lower().replace(" ", "-"): section for section in sections}


def _table_files(section: str) -> list[str]:
    """The files in the first column of the section's table (`| File | What |`)."""
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [path for row in rows for path in re.findall(r"`([^`]+)`", row.split(" | ")[0])]


def _exists(path: str) -> bool:
    """A path as the manual writes it; `<name>` stands for a new file or folder: what is above it."""
    standing = path.split("<", 1)[0]
    return (ROOT / standing).exists() if "<" not in path else (ROOT / standing).parent.is_dir()


def test_each_extension_costs_what_its_table_lists() -> None:
    """The counts said are the table's files and their folders, each file there (a new one's
    folder), and the summary says the same."""
    extensions = _extensions()
    costs = {anchor: COST.search(section) for anchor, section in extensions.items()}
    measured = {anchor: (int(m[1]), int(m[2])) for anchor, m in costs.items() if m is not None}
    assert {
        "a-new-format",
        "a-new-feature-shown-on-the-page",
        "a-new-export-target",
        "a-new-shape-kind",
    } <= set(measured)
    for anchor, (files, folders) in measured.items():
        listed = _table_files(extensions[anchor])
        assert len(listed) == len(set(listed)) == files, (anchor, listed)
        assert len({str(Path(path).parent) for path in listed}) == folders, anchor
        assert [path for path in listed if not _exists(path)] == [], anchor
    text = (ROOT / "CONTRIBUTING.md").read_text("utf-8")
    summary = {anchor: (int(files), int(folders)) for anchor, files, folders in SUMMARY_ROW.findall(text)}
    assert summary == measured
