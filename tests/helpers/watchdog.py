"""Run a command for as long as its owner process lives: `python watchdog.py OWNER_PID -- COMMAND...`.

A test server started in the background by one pytest process (an xdist worker) must not outlive
the run when the run is killed before it can stop the server: the watchdog polls the owner every
second and terminates the command once the owner is gone. SIGTERM to the watchdog stops the command
too. Standard library only: it runs as a plain script, outside the test package.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from typing import Final

POLL_S: Final = 1.0


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie child not reaped yet counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(ChildProcessError):
        reaped, _ = os.waitpid(pid, os.WNOHANG)
        return reaped == 0
    return True


def watch(owner_pid: int, command: list[str]) -> int:
    """Run `command` until it exits, `owner_pid` is gone, or SIGTERM arrives; its exit status."""
    child = subprocess.Popen(command)
    signal.signal(signal.SIGTERM, lambda *_: child.terminate())
    while child.poll() is None:
        if not alive(owner_pid):
            child.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(POLL_S)
    return child.returncode


def main(arguments: list[str]) -> int:
    if len(arguments) < 3 or arguments[1] != "--" or not arguments[0].isdigit():
        print("usage: watchdog.py OWNER_PID -- COMMAND...", file=sys.stderr)
        return 2
    return watch(int(arguments[0]), arguments[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
