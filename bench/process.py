"""Run one command as a whole process and measure it: wall time, CPU time and peak RSS."""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Measurement:
    wall: float  # seconds
    cpu: float  # user + system seconds
    peak_rss_mb: float
    returncode: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _address_space_limit(limit: int | None) -> Callable[[], None] | None:
    """In the child before exec: cap its address space, so that a run too big for the machine
    fails alone (MemoryError) instead of calling the OOM killer on a shared box."""
    if limit is None:
        return None
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def measure(
    argv: list[str], env: dict[str, str], log: Path, timeout: float, memory_limit: int | None = None
) -> Measurement:
    """Run `argv` with stdout and stderr to `log`; `os.wait4` gives this child's own rusage."""
    with log.open("wb") as out:
        started = time.perf_counter()
        child = subprocess.Popen(
            argv,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=_address_space_limit(memory_limit),
        )
        deadline = started + timeout
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                child.kill()
            time.sleep(0.005)
        wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    return Measurement(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, child.returncode)


def repeated_script(script: str, description: str, argv: list[str] | None) -> tuple[int, Path]:
    """A bench script's `--repeats N` (default 3) and its own work folder, bench/.work/<script>."""
    parser = argparse.ArgumentParser(prog=f"python bench/{script}.py", description=description)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    folder = Path(__file__).resolve().parent / ".work" / script
    folder.mkdir(parents=True, exist_ok=True)
    return args.repeats, folder
