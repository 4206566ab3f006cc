"""A node killed with SIGKILL leaves no process behind.

    python bench/killed.py [--kills 40] [--work-dir bench/.work]

Each kill starts the node as a platform does (its own session, `start_new_session`; stdout and
stderr on pipes), with two local workers on a workload big enough that its results file is
streamed in pieces (on threads) and the shards fork, kills it at one moment of its run, then
waits up to 5 s for every process of that session (found by session id in /proc) to be gone and
for the pipes to close: a worker left alive would hold them, and a caller reading the node's
output to its end would hang. After the kills, one more run into the same store must succeed.
The moments are spread over a clean run's wall time, plus one kill each at the first sight of a
worker, when the fork has just happened. The suite runs a few of them
(tests/node/test_killed_node.py); this command, many.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.smoke import GENERATOR  # noqa: E402
from bench.workloads import WORKLOADS, ensure_data  # noqa: E402

KILL: Final = WORKLOADS["kill"]
GRACE_SECONDS: Final = 5.0
POLL_SECONDS: Final = 0.005


@dataclass(frozen=True)
class Kill:
    moment: str  # when it was killed: seconds after the start, or "at the first worker"
    workers: int  # processes of the node's session besides the node when it was killed
    survivors: tuple[str, ...]  # "pid comm" of the session's processes still there after the grace
    pipes_closed: bool  # the node's stdout and stderr reached their end within the grace

    @property
    def clean(self) -> bool:
        return not self.survivors and self.pipes_closed


def session_processes(session: int) -> list[str]:
    """The live processes of `session` as "pid comm" (zombies hold nothing and are not counted)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue  # gone while listed
        comm, fields = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()
        if int(fields[3]) == session and fields[0] != "Z":
            found.append(f"{entry.name} {comm}")
    return found


def node_environment(gt: Path, pred: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "GT_DATASET": str(gt),
        "PRED_DATASET": str(pred),
        "PRELABEL_WORKERS": "2",
    }


def _start(environment: dict[str, str], store: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "handler", "--store", str(store)]
    return subprocess.Popen(
        command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )


def _wait_for_a_worker(node: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while len(session_processes(node.pid)) < 2 and node.poll() is None and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)


def _pipes_close(node: subprocess.Popen[bytes]) -> bool:
    try:
        node.communicate(timeout=GRACE_SECONDS)  # returns at the end of both pipes
    except subprocess.TimeoutExpired:
        return False
    return True


def survivors(session: int) -> tuple[str, ...]:
    """The processes of `session` still alive after up to GRACE_SECONDS (none, once the kernel
    has ended the workers of a killed node)."""
    deadline = time.monotonic() + GRACE_SECONDS
    while (left := session_processes(session)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return tuple(left)


def kill_once(environment: dict[str, str], store: Path, after: float | None) -> Kill:
    """Start the node, kill it `after` seconds in (None: at the first sight of a worker), look."""
    node = _start(environment, store)
    if after is None:
        _wait_for_a_worker(node, timeout=60)
    else:
        time.sleep(after)
    workers = max(0, len(session_processes(node.pid)) - 1)
    node.kill()
    node.wait()
    closed = _pipes_close(node)
    left = survivors(node.pid)
    for line in left:  # a failed kill test must not leave its orphans on the machine
        os.kill(int(line.split()[0]), signal.SIGKILL)
    moment = "at the first worker" if after is None else f"{after:.2f} s"
    return Kill(moment, workers, left, closed)


def clean_run(environment: dict[str, str], store: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    """One run to its end into `store`: its wall seconds and what it printed."""
    started = time.monotonic()
    command = [sys.executable, "-m", "handler", "--store", str(store)]
    done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=300)
    return time.monotonic() - started, done


def moments(wall: float, kills: int) -> list[float | None]:
    """`kills` moments: a tenth of them at the first worker, the rest spread over the run's wall."""
    at_first_worker = max(1, kills // 10)
    spread = kills - at_first_worker
    return [None] * at_first_worker + [wall * (i + 0.5) / spread for i in range(spread)]


def campaign(work_dir: Path, store: Path, kills: int) -> tuple[list[Kill], subprocess.CompletedProcess[str]]:
    files = ensure_data(KILL, work_dir, GENERATOR)
    environment = node_environment(files.gt, files.results)
    wall, first = clean_run(environment, store)
    if first.returncode != 0:
        raise SystemExit(f"the clean run failed (exit {first.returncode}):\n{first.stderr}")
    results = [kill_once(environment, store, after) for after in moments(wall, kills)]
    return results, clean_run(environment, store)[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=40)
    parser.add_argument("--work-dir", type=Path, default=ROOT / "bench" / ".work")
    arguments = parser.parse_args()
    store = arguments.work_dir / "killed-store"
    results, after = campaign(arguments.work_dir, store, arguments.kills)
    for kill in results:
        state = "clean" if kill.clean else f"LEFT {list(kill.survivors)}, pipes closed: {kill.pipes_closed}"
        print(f"killed {kill.moment:>19}: {kill.workers} worker(s) alive at the kill; {state}")
    with_workers = sum(kill.workers > 0 for kill in results)
    dirty = [kill for kill in results if not kill.clean]
    print(
        f"{len(results)} kills, {with_workers} with workers alive, {len(dirty)} left processes; "
        f"next run into the same store: exit {after.returncode}"
    )
    return 1 if dirty or after.returncode != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
