"""Builds the kernels' shared library from `src/*.c` with the system's C compiler.

Plain standard library and no import of `handler`: the wheel's build hook (`wheel_hook.py`) loads
this file by its path, before the package is installed.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Final

SOURCES: Final = Path(__file__).resolve().parent / "src"
# -O3: the kernels are tight loops over columns; no -march=native: a built wheel runs elsewhere.
FLAGS: Final = ("-O3", "-std=c11", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror", "-fno-strict-aliasing")
SUFFIX: Final = ".dll" if sys.platform == "win32" else ".so"


class CompilerMissing(RuntimeError):
    """No C compiler to build the kernels with, and no library built already."""


def sources(folder: Path = SOURCES) -> list[Path]:
    return sorted(folder.glob("*.c"))


def library_name(folder: Path = SOURCES) -> str:
    """`_kernels-<digest>.so`: the digest of the sources and flags it is built from, so an edited
    source is never run from an earlier build."""
    digest = hashlib.sha256(" ".join(FLAGS).encode())
    for source in [*sources(folder), *sorted(folder.glob("*.h"))]:
        digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    return f"_kernels-{digest.hexdigest()[:16]}{SUFFIX}"


def compiler() -> list[str]:
    """$CC, else the compiler Python was built with, else `cc`: the first that is on the PATH."""
    for candidate in (os.environ.get("CC"), sysconfig.get_config_var("CC"), "cc"):
        words = shlex.split(candidate or "")
        if words and shutil.which(words[0]):
            return words[:1]
    raise CompilerMissing(
        "the package's compiled kernels are not built and no C compiler was found: install one "
        "(Debian: `apt-get install gcc libc6-dev`) or install the package with pip, which builds them"
    )


def build(into: Path, folder: Path = SOURCES) -> Path:
    """The library built into `into` (written under a temporary name, then renamed: processes
    building at once each end with a whole file)."""
    import subprocess  # only a source tree's first run builds: the others do not load it

    into.mkdir(parents=True, exist_ok=True)
    target = into / library_name(folder)
    with tempfile.TemporaryDirectory(dir=into) as work:
        partial = Path(work) / target.name
        command = [
            *compiler(),
            *FLAGS,
            "-I",
            str(folder),
            *map(str, sources(folder)),
            "-o",
            str(partial),
            "-lm",
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"building the kernels failed ({shlex.join(command)}):\n{done.stderr}")
        os.replace(partial, target)
    return target


if __name__ == "__main__":
    print(build(Path(sys.argv[1]) if len(sys.argv) > 1 else SOURCES.parent))
