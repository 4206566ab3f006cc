"""What the node runtime and the human CLI share: the store choice, logging, the error boundary."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from types import FrameType
from typing import TYPE_CHECKING, Final

import numpy as np

if TYPE_CHECKING:
    from handler.report.model import Findings

from handler.errors import UserError
from handler.execution import ExecutionOptions
from handler.execution.executors import SCHEDULER_VARIABLE, WORKERS_VARIABLE, workers_from

DEFAULT_STORE: Final = "./prelabel-store"
STORE_VARIABLE: Final = "PRELABEL_STORE"
EXIT_USER_ERROR: Final = 2
DISTRIBUTION: Final = "evaluate-prelabeling-efficiency"
# Phase lines and detail: INFO by default, WARNING with -q, DEBUG with -v.
LOGGER: Final = logging.getLogger("prelabel")
EXIT_INTERRUPTED: Final = 128 + signal.SIGINT
EXIT_TERMINATED: Final = 128 + signal.SIGTERM


def add_store_option(parser: argparse.ArgumentParser) -> None:
    """`--store URI`, the same for the node runtime and every CLI command."""
    parser.add_argument(
        "--store",
        metavar="URI",
        help=f"asset store: a folder or s3://bucket/prefix (default: ${STORE_VARIABLE} or {DEFAULT_STORE})",
    )


def add_execution_options(parser: argparse.ArgumentParser) -> None:
    """`--workers N` and `--scheduler ADDRESS`: where the shards run (node runtime and CLI)."""
    parser.add_argument(
        "--workers",
        metavar="N",
        help=f"local processes (default: ${WORKERS_VARIABLE}, else every core when the input is large)",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help=f"run the shards on a dask.distributed cluster (default: ${SCHEDULER_VARIABLE})",
    )


def execution_options(args: argparse.Namespace) -> ExecutionOptions:
    """The options, else the environment's PRELABEL_WORKERS / PRELABEL_DASK_SCHEDULER."""
    environment = ExecutionOptions.from_environment(os.environ)
    workers = workers_from(args.workers) if args.workers is not None else environment.workers
    return ExecutionOptions(workers, args.scheduler or environment.scheduler)


def package_version() -> str:
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


def add_common_options(parser: argparse.ArgumentParser) -> None:
    """`--version`, and `-q` / `-v` for the "prelabel" logger's level."""
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    loudness = parser.add_mutually_exclusive_group()
    loudness.add_argument("-q", "--quiet", action="store_true", help="log only errors (no phase lines)")
    loudness.add_argument(
        "-v", "--verbose", action="store_true", help="log detail too (formats, box counts, the store)"
    )


def configure_logging(args: argparse.Namespace, default: int = logging.INFO) -> None:
    """Log records of the "prelabel" logger go to stderr as `[prelabel] message`.

    The handler is made per call, on the stderr of the moment (a test may have replaced it).
    """
    level = logging.WARNING if args.quiet else logging.DEBUG if args.verbose else default
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("[prelabel] %(message)s"))
    LOGGER.handlers[:] = [handler]
    LOGGER.setLevel(level)
    LOGGER.propagate = False  # one line per record, whatever the root logger is set to


def log_detail(findings: Findings, location: str) -> None:
    """The -v lines after a run: what was read, in which format, and where the report is."""
    data = findings.dataset
    LOGGER.debug("ground truth: %s (%s), %d objects", data.gt_source, data.gt_format, data.gt_objects)
    LOGGER.debug(
        "predictions: %s (%s), %d of %d kept at confidence %g",
        data.pred_source,
        data.pred_format,
        data.predictions_kept,
        data.predictions,
        findings.parameters.confidence_threshold,
    )
    LOGGER.debug(
        "images: %d scored, %d only in ground truth, %d only in predictions; %d boxes skipped",
        data.images,
        data.gt_only_images,
        data.pred_only_images,
        findings.skipped.count,
    )
    LOGGER.debug("report: %s", location)


def store_uri(option: str | None) -> str:
    """`--store`, else $PRELABEL_STORE, else the embedded default (a local folder)."""
    return option or os.environ.get(STORE_VARIABLE) or DEFAULT_STORE


class Terminated(BaseException):
    """SIGTERM, raised where the process is, so that a publish under way deletes what it wrote."""


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated


@contextmanager
def _terminate_as_exception() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; the host then owns the signals
        return
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def guarded(main: Callable[[], int]) -> int:
    """Run `main`; a user's mistake becomes one line on stderr and a non-zero exit.

    SIGINT and SIGTERM end the run with one line and 130 / 143 (128 + the signal), after the
    publish has removed its staging. numpy's floating-point warnings are off: the readers
    range-check values, and a warning would only be noise on the user's terminal.
    """
    try:
        with _terminate_as_exception(), np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return main()
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("error: interrupted; no report was published", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print("error: terminated; no report was published", file=sys.stderr)
        return EXIT_TERMINATED
