"""A damaged stored report (a part cut short, emptied, overwritten, a CSV without its header, a
chunk whose indices point nowhere) makes `show`, `export` and `list` say so in one `error:` line
naming the part, or print what is intact; never a traceback, never a file written by a refusal."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Final

import pytest
from helpers.examples import examples
from helpers.paths import EXAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from handler.cli import main as cli_main
from handler.engine.npz_chunks import loaded, saved

# Every way to read a stored report back, as the CLI's arguments after the report id.
READERS: Final = (
    ("show",),
    ("show", "--json"),
    ("show", "--outputs"),
    ("show", "--queue"),
    ("show", "--sketches"),
    ("show", "--html"),
    ("show", "--outcomes"),
    ("show", "--outcomes", "--format", "csv"),
    ("export", "--to", "label-studio"),
    ("export", "--to", "cvat"),
    ("export", "--to", "coco"),
    ("export", "--to", "yolo"),
    ("list",),
)
PARTS: Final = (
    "findings.json",
    "review_queue.csv",
    "sketches.json",
    "manifest.json",
    "ledger/00000.npz",
    "pre_labels/00000.npz",
)


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    store = tmp_path_factory.mktemp("damaged") / "store"
    code = cli_main([str(EXAMPLES / "gt.json"), str(EXAMPLES / "predictions.jsonl"), "--store", str(store)])
    assert code == 0
    (report,) = (store / "reports").iterdir()
    return store, report.name


def _cut(content: bytes, at: float) -> bytes:
    return content[: int(len(content) * at)]


def _overwritten(content: bytes, at: float) -> bytes:
    start = int(len(content) * at)
    return (
        content[:start]
        + bytes((b * 7 + 3) % 256 for b in content[start : start + 64])
        + content[start + 64 :]
    )


def _pointing_nowhere(content: bytes, at: float) -> bytes:
    """A chunk that loads but whose first index column points past its names."""
    chunk = loaded(content)
    key = "image" if "image" in chunk else next(iter(chunk))
    column = chunk[key].copy()
    if len(column):
        column[int((len(column) - 1) * at)] = 10**6
    return saved({**chunk, key: column})


def _headless(content: bytes, at: float) -> bytes:
    return content.split(b"\n", 1)[-1] if at < 0.5 else b"asset_id\n" + b"x" * 200_000 + b"\n"


MUTATIONS: Final = {
    "cut": _cut,
    "overwritten": _overwritten,
    "nowhere": _pointing_nowhere,
    "headless": _headless,
}


def _applies(mutation: str, part: str) -> bool:
    return (mutation != "nowhere" or part.endswith(".npz")) and (
        mutation != "headless" or part.endswith(".csv")
    )


@settings(
    max_examples=examples(40),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    part=st.sampled_from(PARTS),
    mutation=st.sampled_from(sorted(MUTATIONS)),
    at=st.floats(0, 1),
    reader=st.sampled_from(READERS),
)
def test_a_damaged_part_is_one_error_line_or_what_is_intact(
    stored: tuple[Path, str],
    tmp_path_factory: pytest.TempPathFactory,
    capsysbinary: pytest.CaptureFixture[bytes],
    part: str,
    mutation: str,
    at: float,
    reader: tuple[str, ...],
) -> None:
    if not _applies(mutation, part):
        return
    original, report_id = stored
    store = tmp_path_factory.mktemp("copy") / "store"
    shutil.copytree(original, store)
    damaged = store / "reports" / report_id / part
    damaged.write_bytes(MUTATIONS[mutation](damaged.read_bytes(), at))
    out = store.parent / "exported"
    command, *options = reader
    target = [] if command == "list" else [report_id]
    written = ["--out", str(out / "pre-labels.file")] if command == "export" else []
    capsysbinary.readouterr()
    code = cli_main([command, *target, *options, *written, "--store", str(store)])
    error = capsysbinary.readouterr().err.decode("utf-8", "replace")
    assert code in (0, 2), error
    if code == 2:
        lines = error.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), error
        assert not out.exists() or not any(out.rglob("*")), "a refusal wrote a file"
    assert "Traceback" not in error


def test_a_chunk_pointing_nowhere_names_its_part(
    stored: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original, report_id = stored
    store = tmp_path / "store"
    shutil.copytree(original, store)
    chunk = store / "reports" / report_id / "pre_labels" / "00000.npz"
    chunk.write_bytes(_pointing_nowhere(chunk.read_bytes(), 0.5))
    assert (
        cli_main(
            ["export", report_id, "--to", "coco", "--out", str(tmp_path / "c.json"), "--store", str(store)]
        )
        == 2
    )
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        f"error: report {report_id!r}: its pre_labels.npz is damaged "
        "(ValueError: damaged chunk: image points outside its 24 entries)"
    )
    assert not (tmp_path / "c.json").exists()
