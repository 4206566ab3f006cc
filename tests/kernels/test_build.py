"""The kernels' library: built from the sources it is loaded for, by the system's compiler, and
carried by the wheel so that an installed package needs none."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import handler.kernels as kernels
from handler.kernels import building as build


def test_the_library_name_follows_its_sources(tmp_path: Path) -> None:
    copy = tmp_path / "src"
    shutil.copytree(build.SOURCES, copy)
    before = build.library_name(copy)
    assert before == build.library_name(build.SOURCES)
    first = sorted(copy.glob("*.c"))[0]
    first.write_text(first.read_text() + "\n/* edited */\n")
    assert build.library_name(copy) != before


def test_a_build_is_one_whole_file_named_by_its_sources(tmp_path: Path) -> None:
    built = build.build(tmp_path / "lib")
    assert built.name == build.library_name() and built.stat().st_size > 0
    assert [p.name for p in (tmp_path / "lib").iterdir()] == [built.name], "no partial file is left"


def test_without_a_compiler_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "no-such-compiler")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(build.CompilerMissing, match="apt-get install gcc"):
        build.compiler()


def test_a_new_build_removes_the_earlier_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "package"
    folder.mkdir()
    earlier = folder / "_kernels-0000000000000000.so"
    earlier.write_bytes(b"a build of other sources")
    monkeypatch.setattr(kernels, "HERE", folder)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    kernels.library.cache_clear()
    try:
        loaded = kernels.library()
    finally:
        kernels.library.cache_clear()
    assert [p.name for p in folder.iterdir()] == [build.library_name()]
    assert loaded._name == str(folder / build.library_name())
