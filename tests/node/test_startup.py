"""What a run imports: only what it needs, checked in a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import tomllib
from helpers.builders import write_json
from helpers.paths import ROOT

# Runs the node as `python -m handler` would (or the CLI, as `python -m handler.cli`), then names
# the modules of interest it imported.
PROBE = """
import runpy, sys
watched, module, sys.argv = sys.argv[1].split(","), sys.argv[2], [sys.argv[2], *sys.argv[3:]]
try:
    runpy.run_module(module, run_name="__main__", alter_sys=True)
except SystemExit as stop:
    code = stop.code
print(code, *sorted(name for name in watched if name in sys.modules))
"""


def _imported(
    tmp_path: Path,
    watched: list[str],
    *args: str,
    exit_code: int = 0,
    module: str = "handler",
    **inputs: str,
) -> list[str]:
    gt = write_json(
        tmp_path / "gt.json",
        {
            "images": [{"id": 1, "file_name": "a.jpg", "width": 100, "height": 100}],
            "annotations": [
                {"id": 1, "image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20], "iscrowd": 0}
            ],
            "categories": [{"id": 1, "name": "cat"}],
        },
    )
    pred = write_json(
        tmp_path / "results.json", [{"image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 21], "score": 0.9}]
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GT_DATASET": str(gt), "PRED_DATASET": str(pred), **inputs}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, ",".join(watched), module, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    code, *found = done.stdout.splitlines()[-1].split()
    assert int(code) == exit_code, done.stderr
    return found


def test_a_valid_run_of_coco_files_loads_no_code_it_does_not_use(tmp_path: Path) -> None:
    # The inputs plainly meet node.json's schema and COCO files have no schema of their own; the
    # export writers serve `prelabel-eval export`; a small run forks no worker.
    watched = [
        "multiprocessing",
        "jsonschema",
        "handler.report.exports.targets",
        "handler.report.exports.cvat_xml",
    ]
    assert _imported(tmp_path, watched, "--store", str(tmp_path / "store"), "-q") == []
    assert len(list((tmp_path / "store" / "reports").iterdir())) == 1


def test_help_and_version_load_no_run_code(tmp_path: Path) -> None:
    watched = ["pydantic", "jinja2", "jsonschema", "importlib.metadata", "handler.pipeline"]
    assert _imported(tmp_path, watched, "--help") == []
    assert _imported(tmp_path, watched, "--version") == ["importlib.metadata"]  # asked for, looked up


def test_the_cli_loads_a_commands_code_only_when_it_runs(tmp_path: Path) -> None:
    # Every `prelabel-eval` start builds the whole parser (~0.25 s shorter than importing it all).
    watched = ["pydantic", "jinja2", "rich", "handler.pipeline", "handler.report.findings"]
    assert _imported(tmp_path, watched, "--help", module="handler.cli") == []
    assert _imported(tmp_path, watched, "list", "--store", str(tmp_path), module="handler.cli") == []
    assert _imported(tmp_path, watched, "export", "--help", module="handler.cli") == []


def test_a_mistake_in_the_inputs_is_told_before_the_run_code_loads(tmp_path: Path) -> None:
    watched = ["pydantic", "jinja2", "handler.pipeline"]
    found = _imported(tmp_path, watched, "--store", str(tmp_path / "store"), exit_code=2, IOU_MIN="0.33")
    assert found == []


HUGE_PAGES = "import {module}, numpy; print(numpy._core.multiarray._get_madvise_hugepage())"


def _ran_after_importing(
    program: str, module: str, variable: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """`program` run after importing `module`, `variable` unset unless in `env`."""
    environ = {k: v for k, v in os.environ.items() if k != variable} | env
    done = subprocess.run(
        [sys.executable, "-c", program.format(module=module)],
        env={**environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done


def _printed_after_importing(program: str, module: str, variable: str, **env: str) -> str:
    """What `program` prints after importing `module`, `variable` unset unless in `env`."""
    return _ran_after_importing(program, module, variable, **env).stdout.strip()


def _huge_pages_after_importing(module: str, **env: str) -> str:
    return _printed_after_importing(HUGE_PAGES, module, "NUMPY_MADVISE_HUGEPAGE", **env)


def test_the_entry_points_turn_numpy_huge_pages_off_unless_the_user_chose() -> None:
    # Faulting in fresh huge pages cost the 50k run ~0.4 s of wall (handler/entry.py).
    assert _huge_pages_after_importing("handler.__main__") == "False"
    assert _huge_pages_after_importing("handler.cli") == "False"
    assert _huge_pages_after_importing("handler.__main__", NUMPY_MADVISE_HUGEPAGE="1") == "True"
    # The Python API leaves the caller's process as numpy sets it.
    assert _huge_pages_after_importing("handler.metric") == _huge_pages_after_importing("json")


# The threads of the OpenBLAS that numpy loaded (its wheels' symbols are prefixed `scipy_`).
BLAS_THREADS = """
import ctypes, {module}, numpy
library = next(line.split()[-1] for line in open("/proc/self/maps") if "openblas" in line.lower())
print(ctypes.CDLL(library).scipy_openblas_get_num_threads64_())
"""


def _blas_threads_after_importing(module: str, **env: str) -> str:
    return _printed_after_importing(BLAS_THREADS, module, "OPENBLAS_NUM_THREADS", **env)


def test_the_entry_points_run_blas_on_one_thread_unless_the_user_chose() -> None:
    # The bootstrap's small products waited on busy cores for BLAS's threads (handler/entry.py).
    assert _blas_threads_after_importing("handler.__main__") == "1"
    assert _blas_threads_after_importing("handler.cli") == "1"
    assert _blas_threads_after_importing("handler.__main__", OPENBLAS_NUM_THREADS="2") == "2"
    # The Python API leaves the caller's process as numpy sets it.
    assert _blas_threads_after_importing("handler.metric") == _blas_threads_after_importing("json")


# Whether pydantic read the installed distributions' entry points for plugins when it built a model.
PLUGINS_LOOKED_UP = """
import {module}
from pydantic import BaseModel
from pydantic.plugin import _loader
class Built(BaseModel):
    count: int
print(_loader._plugins is not None)
"""


def _plugins_looked_up_after_importing(module: str, **env: str) -> str:
    return _printed_after_importing(PLUGINS_LOOKED_UP, module, "PYDANTIC_DISABLE_PLUGINS", **env)


def test_the_entry_points_skip_pydantics_plugin_look_up_unless_the_user_chose() -> None:
    # Reading every distribution's entry points was a fixed cost of each start (handler/entry.py).
    assert _plugins_looked_up_after_importing("handler.__main__") == "False"
    assert _plugins_looked_up_after_importing("handler.cli") == "False"
    assert _plugins_looked_up_after_importing("handler.cli", PYDANTIC_DISABLE_PLUGINS="") == "True"
    # The Python API leaves the caller's process as pydantic sets it.
    assert _plugins_looked_up_after_importing("handler.metric") == "True"


# The malloc arenas after threads allocated (glibc's malloc_stats lists each on stderr).
ARENAS = """
import ctypes, threading, {module}
def allocate():
    kept = [bytes(4096) for _ in range(1000)]
threads = [threading.Thread(target=allocate) for _ in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
ctypes.CDLL(None).malloc_stats()
"""


def _arenas_after_importing(module: str, **env: str) -> int:
    return _ran_after_importing(ARENAS, module, "MALLOC_ARENA_MAX", **env).stderr.count("Arena ")


def test_the_entry_points_keep_one_malloc_arena_unless_the_user_chose() -> None:
    # Threads' arenas kept their freed memory from the main thread's next phase (handler/entry.py).
    assert _arenas_after_importing("handler.cli") == 1
    assert _arenas_after_importing("handler.__main__") == 1
    assert _arenas_after_importing("handler.__main__", MALLOC_ARENA_MAX="4") > 1
    # The Python API leaves the caller's process as glibc sets it.
    assert _arenas_after_importing("handler.metric") > 1


# Whether a block of 6 MiB is served from a mapping of its own after a larger one was freed
# (glibc's mallinfo2: `hblkhd`, the bytes in such mappings).
MAPPED = """
import ctypes, {module}
class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd",
        "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MallInfo2
freed = bytearray(8 << 20)
del freed
before = libc.mallinfo2().hblkhd
kept = bytearray(6 << 20)
print(libc.mallinfo2().hblkhd - before >= len(kept))
"""


def _mapped_after_importing(module: str, **env: str) -> str:
    return _printed_after_importing(MAPPED, module, "MALLOC_MMAP_THRESHOLD_", **env)


def test_the_entry_points_map_large_blocks_on_their_own_unless_the_user_chose() -> None:
    # Freed columns stayed in the heap until the next phase (handler/entry.py).
    assert _mapped_after_importing("handler.cli") == "True"
    assert _mapped_after_importing("handler.__main__") == "True"
    assert _mapped_after_importing("handler.cli", MALLOC_MMAP_THRESHOLD_="16777216") == "False"
    # The Python API leaves the caller's process as glibc sets it: the threshold rose to the freed block.
    assert _mapped_after_importing("handler.metric") == "False"


# A command that leaves: an exit handler registered after the entry's runs, the teardown does not
# (a module-level object's finaliser would print at the teardown).
LEAVING = """
import atexit, sys
from handler.entry import leave

class Finalised:
    def __del__(self):
        print("torn down", flush=True)

kept = Finalised()
atexit.register(lambda: print("exit handler", flush=True))
print("ran", end=" ", flush=True)
sys.stdout.write("unflushed")
leave(3)
"""


def test_a_command_leaves_after_its_exit_handlers_without_the_teardown() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", LEAVING], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 3
    assert done.stdout.split() == ["ran", "unflushedexit", "handler"]


# The installed command, as pip's wrapper calls it (here listing an empty store's reports), with an
# object whose finaliser would print at the interpreter's teardown.
SCRIPT = """
import importlib, sys

class Finalised:
    def __del__(self):
        print("torn down", flush=True)

kept = Finalised()
module, function = sys.argv[1].split(":")
sys.argv = ["prelabel-eval", "list", "--store", sys.argv[2]]
sys.exit(getattr(importlib.import_module(module), function)())
"""


def test_the_installed_command_leaves_without_the_teardown(tmp_path: Path) -> None:
    command = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for target, torn in ((command["prelabel-eval"], False), ("handler.cli:main", True)):
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, target, str(tmp_path)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert ("torn down" in done.stdout) == torn, (target, done.stdout)  # `main` alone returns
