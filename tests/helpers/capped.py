"""The node as a whole process under an address-space cap (`ulimit -v`, a container with strict
overcommit): what a test of memory bounds runs, since the cap must hold before the interpreter starts."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path


def run_capped(store: Path, cap: int, **environ: str) -> subprocess.CompletedProcess[str]:
    """`python -m handler -q --store STORE` with `environ` added, its address space capped at `cap` bytes."""

    def capped() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    return subprocess.run(
        [sys.executable, "-m", "handler", "-q", "--store", str(store)],
        env={**os.environ, **environ},
        preexec_fn=capped,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
