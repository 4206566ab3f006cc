"""Every file a command writes for the user goes through one safe path (`LocalStore.put`): a
regular file or nothing is replaced, never a device, a named pipe, a symbolic link or a folder; a
name that is no file's (`.`, `/`) or that two images would share is refused before the first byte."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Final

import pytest
from helpers.builders import annotation, asset, write_json
from helpers.needs import missing
from helpers.paths import EXAMPLES

from handler.cli import main as cli_main

GT, PRED = str(EXAMPLES / "gt.json"), str(EXAMPLES / "predictions.jsonl")
# Each writer: the CLI's arguments with the file it writes last.
WRITERS: Final = {
    "export label-studio": ["export", "latest", "--to", "label-studio", "--out"],
    "export cvat": ["export", "latest", "--to", "cvat", "--out"],
    "export coco": ["export", "latest", "--to", "coco", "--out"],
    "compare --html": ["compare", GT, PRED, PRED, "--html"],
    "compare --transitions": ["compare", GT, PRED, PRED, "--transitions"],
    "calibrate --out": ["calibrate", str(EXAMPLES / "label_studio_export.json"), "--out"],
}


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _link_to_a_file(path: Path) -> None:
    (path.parent / "kept.txt").write_text("kept\n")
    path.symlink_to(path.parent / "kept.txt")


def _dangling_link(path: Path) -> None:
    path.symlink_to(path.parent / "nowhere.txt")


def _folder(path: Path) -> None:
    (path / "inside.txt").parent.mkdir()
    (path / "inside.txt").write_text("kept\n")


def _device(path: Path) -> None:
    if os.geteuid() != 0:  # .ci/run runs as root here; elsewhere a skip that says why (CI: a failure)
        missing("a device node is made by root only")
    os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # /dev/null's numbers, in tmp


NOT_FILES: Final[dict[str, Callable[[Path], None]]] = {
    "named pipe": _fifo,
    "symbolic link": _link_to_a_file,
    "dangling link": _dangling_link,
    "folder": _folder,
    "device": _device,
}


def _state(folder: Path) -> list[tuple[str, int, str]]:
    """Every entry under `folder`: its name, its kind and, for a link, where it points."""
    return sorted(
        (
            str(path.relative_to(folder)),
            stat.S_IFMT(path.lstat().st_mode),
            os.readlink(path) if path.is_symlink() else "",
        )
        for path in folder.rglob("*")
    )


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("safe") / "store"
    assert cli_main([GT, PRED, "--store", str(folder)]) == 0
    return folder


@pytest.mark.parametrize("kind", list(NOT_FILES))
@pytest.mark.parametrize("writer", list(WRITERS))
def test_nothing_but_a_regular_file_is_written_over(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], writer: str, kind: str
) -> None:
    target = tmp_path / "out" / ("target.csv" if writer.endswith("transitions") else "target.json")
    target.parent.mkdir()
    NOT_FILES[kind](target)
    before = _state(tmp_path)
    capsys.readouterr()
    stored = [] if writer.startswith("calibrate") else ["--store", str(store)]  # calibrate reads no store
    assert cli_main([*WRITERS[writer], str(target), *stored]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: {target}: is a") and line.endswith("not a regular file: not written over")
    assert _state(tmp_path) == before, "the target, or a temporary file beside it, changed"


@pytest.mark.parametrize("name", [".", "/", "..", "out/."])
def test_a_folders_name_is_no_file_name(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    os.chdir(tmp_path)
    assert cli_main(["export", "latest", "--to", "coco", "--out", name, "--store", str(store)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.endswith("expected a file name, not a folder")


@pytest.mark.parametrize(
    ("assets", "clash"),
    [
        (["a.jpg", "sub/a.jpg"], "image 'a.jpg'"),
        (["classes.jpg", "b.jpg"], "the class list"),
        (["x/a.png", "y/a.jpg"], "image 'x/a.png'"),
    ],
)
@pytest.mark.parametrize("target", ["yolo", "yolo-obb"])
def test_label_files_two_images_would_share_are_refused_before_any(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], assets: list[str], clash: str, target: str
) -> None:
    box = annotation(("car", 10, 10, 50, 50))
    gt = write_json(tmp_path / "gt.json", [asset(name, [box]) for name in assets])
    pred = write_json(tmp_path / "pred.json", [asset(name, [{**box, "confidence": 0.9}]) for name in assets])
    store = str(tmp_path / "store")
    assert cli_main([str(gt), str(pred), "--store", store]) == 0
    out = tmp_path / "labels"
    capsys.readouterr()
    assert cli_main(["export", "latest", "--to", target, "--out", str(out), "--store", store]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert clash in line and "would both be written to" in line
    assert not out.exists()
