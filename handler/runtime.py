"""What the node runtime and the human CLI share: the store choice and the error boundary."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Final

from handler.errors import UserError
from handler.execution import ExecutionOptions
from handler.execution.executors import SCHEDULER_VARIABLE, WORKERS_VARIABLE, workers_from

DEFAULT_STORE: Final = "./prelabel-store"
STORE_VARIABLE: Final = "PRELABEL_STORE"
EXIT_USER_ERROR: Final = 2


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


def store_uri(option: str | None) -> str:
    """`--store`, else $PRELABEL_STORE, else the embedded default (a local folder)."""
    return option or os.environ.get(STORE_VARIABLE) or DEFAULT_STORE


def guarded(main: Callable[[], int]) -> int:
    """Run `main`; a user's mistake becomes one line on stderr and a non-zero exit."""
    try:
        return main()
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("error: interrupted; no report was published", file=sys.stderr)
        return 130
