"""The docs say what the product does: the report's parts, the install commands, the screenshot."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Final

import tomllib
from helpers.paths import EXAMPLES, ROOT

from handler.inputs import parse_inputs
from handler.pipeline import run
from handler.storage.local import LocalStore

README: Final = ROOT / "README.md"
REPORT_DOC: Final = ROOT / "docs" / "report.md"
# A part written in chunks is listed by its first one (`outcomes/00000.jsonl`, …).
CHUNK: Final = re.compile(r"/\d{5}\.")
# Written only when a class reading is proposed (the example needs none).
SOMETIMES: Final = {"class_map.json"}


def _written_parts(store: Path) -> set[str]:
    inputs = parse_inputs(
        {"GT_DATASET": str(EXAMPLES / "gt.json"), "PRED_DATASET": str(EXAMPLES / "predictions.jsonl")}
    )
    folder = store / "reports" / run(inputs, LocalStore(store)).outputs.report_id
    return {
        CHUNK.sub("/00000.", str(path.relative_to(folder))) for path in folder.rglob("*") if path.is_file()
    }


def _readme_parts() -> set[str]:
    text = README.read_text(encoding="utf-8")
    start = text.index("the report is in `./prelabel-store/reports/<REPORT_ID>/`")
    said = text[start : text.index("\n\n", start)]
    return {name for name in re.findall(r"`([\w./]+\.(?:json|html|jsonl|csv|npz))`", said)}


def _report_doc_parts() -> set[str]:
    rows = re.findall(r"^\| `([^`]+)`", REPORT_DOC.read_text(encoding="utf-8"), flags=re.MULTILINE)
    table = rows[: next(i for i, name in enumerate(rows) if name == "manifest.json") + 1]
    return set(table)


def test_the_parts_the_readme_and_the_docs_list_are_what_a_run_writes(tmp_path: Path) -> None:
    written = _written_parts(tmp_path / "store")
    assert _readme_parts() - SOMETIMES == written
    assert _report_doc_parts() - SOMETIMES == written
    assert _readme_parts() & _report_doc_parts() >= SOMETIMES


# `pip install X` in a doc or a message: X is `.`, `.[extra]` or the distribution's name with extras.
INSTALL: Final = re.compile(r"pip install ['\"]?([^'\"\s)`]+)")


def _install_targets() -> list[tuple[str, str]]:
    texts = [README, ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
    texts += sorted((ROOT / "handler").rglob("*.py"))
    return [
        (str(path.relative_to(ROOT)), target)
        for path in texts
        for target in INSTALL.findall(path.read_text(encoding="utf-8"))
    ]


def test_every_install_command_names_the_real_distribution_and_extras() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = set(project["optional-dependencies"])
    found = _install_targets()
    assert any(where.startswith("handler/") for where, _ in found), (
        "the product's own messages are checked too"
    )
    for where, target in found:
        name, _, rest = target.partition("[")
        assert name in (".", project["name"]), f"{where}: pip install {target}: not {project['name']}"
        wanted = set(rest.rstrip("]").split(",")) - {""}
        assert wanted <= extras, f"{where}: pip install {target}: no extra {sorted(wanted - extras)}"


def test_the_readme_screenshot_is_made_from_the_current_templates() -> None:
    """`python examples/screenshot.py` re-makes it (docs/testing.md) and stamps the templates' digest."""
    spec = importlib.util.spec_from_file_location("screenshot", EXAMPLES / "screenshot.py")
    assert spec is not None and spec.loader is not None
    screenshot = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(screenshot)
    stamped = screenshot.STAMP.read_text(encoding="utf-8").strip()
    assert stamped == screenshot.templates_digest(), (
        "the page's templates changed since the README screenshot was made: run python examples/screenshot.py"
    )
