"""What the node runtime and the human CLI share: the store choice and the error boundary."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Final

import numpy as np

from handler.errors import UserError

DEFAULT_STORE: Final = "./prelabel-store"
STORE_VARIABLE: Final = "PRELABEL_STORE"
EXIT_USER_ERROR: Final = 2
EXIT_INTERRUPTED: Final = 128 + signal.SIGINT
EXIT_TERMINATED: Final = 128 + signal.SIGTERM


def add_store_option(parser: argparse.ArgumentParser) -> None:
    """`--store URI`, the same for the node runtime and every CLI command."""
    parser.add_argument(
        "--store",
        metavar="URI",
        help=f"asset store: a folder or s3://bucket/prefix (default: ${STORE_VARIABLE} or {DEFAULT_STORE})",
    )


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
