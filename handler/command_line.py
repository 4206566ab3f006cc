"""What both command lines share, the node's (`python -m handler`) and the people's
(`prelabel-eval`): their option blocks (argparse parents, one line per mistake), the store they
choose, their logging, and the boundary that turns errors and signals into exit codes."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import TYPE_CHECKING, Any, Final, NoReturn

if TYPE_CHECKING:
    from handler.execution import ExecutionOptions
    from handler.report.findings import Findings
    from handler.storage import Store

from handler.datasets.read_options import READ_KEYS, READ_OPTIONS, SIDES, ReadOption, option_flag
from handler.errors import StorageError, UserError, escape_controls
from handler.execution.executors import SCHEDULER_VARIABLE, WORKERS_VARIABLE, workers_from

DEFAULT_STORE: Final = "./prelabel-store"
STORE_VARIABLE: Final = "PRELABEL_STORE"
EXIT_USER_ERROR: Final = 2
DISTRIBUTION: Final = "evaluate-prelabeling-efficiency"
# Phase lines and detail: INFO by default, WARNING with -q, DEBUG with -v.
LOGGER: Final = logging.getLogger("prelabel")
EXIT_INTERRUPTED: Final = 128 + signal.SIGINT
EXIT_TERMINATED: Final = 128 + signal.SIGTERM
# What a shell reports for a command whose reader went away (`prelabel-eval list | head -1`).
EXIT_BROKEN_PIPE: Final = 128 + signal.SIGPIPE


class OneLineParser(argparse.ArgumentParser):
    """argparse, with a mistake on the command line said like any other: one line, exit 2.

    argparse's own answer is the whole usage, then the error, which scrolls the point away.
    `help_command` is where the line sends the user (default: `<prog> --help`).
    """

    def __init__(self, *args: Any, help_command: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._help_command = help_command or f"{self.prog} --help"

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USER_ERROR, f"error: {escape_controls(message)} (see {self._help_command})\n")


def option_block() -> OneLineParser:
    """A block of options declared once, that every command taking it inherits (`parents=`)."""
    return OneLineParser(add_help=False)


def store_parent() -> OneLineParser:
    """`--store URI`, the same for the node runtime and every CLI command."""
    parent = option_block()
    parent.add_argument(
        "--store",
        metavar="URI",
        help=f"asset store: a folder or s3://bucket/prefix (default: ${STORE_VARIABLE} or {DEFAULT_STORE})",
    )
    return parent


def add_read_options(parser: argparse.ArgumentParser) -> None:
    """--gt-names/--pred-names FILE, --gt-layout/--pred-layout COLUMNS and every other read option
    of `handler.datasets.read_options.READ_OPTIONS`, each parsed as it is read; `read_inputs(args)`
    gives their values by inputs-file key."""
    group = parser.add_argument_group(
        "reading", "what a side's files do not say (also keys of an inputs file)"
    )
    for option in READ_OPTIONS:
        for side in SIDES:
            key = option.key(side)
            group.add_argument(
                option_flag(key),
                dest=key.lower(),
                metavar=option.metavar,
                type=_read_option_type(option),
                help=f"{option.help[side]} ({key})",
            )


def _read_option_type(option: ReadOption) -> Callable[[str], Any]:
    """argparse `type=`: the option's value, refused on the command line naming the option."""

    def parsed(text: str) -> Any:
        try:
            return option.parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return parsed


def read_inputs(args: argparse.Namespace) -> dict[str, Any]:
    """The read options given on the command line, parsed, by inputs-file key (GT_NAMES, ...)."""
    return {key: value for key in READ_KEYS if (value := getattr(args, key.lower(), None)) is not None}


def execution_parent() -> OneLineParser:
    """`--workers N` and `--scheduler ADDRESS`: where the shards run (node runtime and CLI)."""
    parent = option_block()
    parent.add_argument(
        "--workers",
        metavar="N",
        help=f"local processes (default: ${WORKERS_VARIABLE}, else every core when the input is large)",
    )
    parent.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help=f"run the shards on a dask.distributed cluster (default: ${SCHEDULER_VARIABLE})",
    )
    return parent


def execution_options(args: argparse.Namespace) -> ExecutionOptions:
    """The options, else the environment's PRELABEL_WORKERS / PRELABEL_DASK_SCHEDULER."""
    from handler.execution import ExecutionOptions  # the run's code, imported when a run starts

    environment = ExecutionOptions.from_environment(os.environ)
    workers = workers_from(args.workers) if args.workers is not None else environment.workers
    return ExecutionOptions(workers, args.scheduler or environment.scheduler)


def package_version() -> str:
    # Imported here: importlib.metadata and the look-up of the distribution cost start-up time that
    # a run does not need.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


class _VersionAction(argparse.Action):
    """`--version`: argparse's own, with the version looked up only when it is asked for."""

    def __init__(self, option_strings: list[str], **kwargs: Any) -> None:
        super().__init__(
            option_strings,
            dest=argparse.SUPPRESS,  # like argparse's: no `version` attribute in the namespace
            default=argparse.SUPPRESS,
            nargs=0,
            help="show program's version number and exit",
        )

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        print(f"{parser.prog} {package_version()}")
        parser.exit()


def add_version_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version", action=_VersionAction)


def common_parent() -> OneLineParser:
    """`--version`, and `-q` / `-v` for the "prelabel" logger's level."""
    parser = option_block()
    add_version_option(parser)
    loudness = parser.add_mutually_exclusive_group()
    loudness.add_argument("-q", "--quiet", action="store_true", help="log only errors (no phase lines)")
    loudness.add_argument(
        "-v", "--verbose", action="store_true", help="log detail too (formats, box counts, the store)"
    )
    return parser


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


def warning_lines(findings: Findings) -> list[str]:
    """The run's data-health warnings as the terminal shows them: `warning: message`, one line each."""
    return [escape_controls(f"{warning.severity}: {warning.message}") for warning in findings.warnings]


def store_uri(option: str | None) -> str:
    """`--store`, else $PRELABEL_STORE, else the embedded default (a local folder)."""
    return option or os.environ.get(STORE_VARIABLE) or DEFAULT_STORE


def chosen_store(args: argparse.Namespace) -> Store:
    """The store of `--store`, else $PRELABEL_STORE, else the default; a refusal names which it was."""
    from handler.storage import open_store  # the run's code, imported when a command needs a store

    given = "--store" if args.store else f"${STORE_VARIABLE}" if os.environ.get(STORE_VARIABLE) else "store"
    try:
        return open_store(store_uri(args.store))
    except StorageError as error:
        raise StorageError(f"{given}: {error}") from None


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


def _reader_gone() -> int:
    """stdout's reader closed the pipe (`| head -1`): end quietly, as `cat` and `grep` do.

    stdout is pointed at /dev/null so that Python's own flush at exit has nowhere to fail.
    """
    with suppress(OSError, ValueError):  # a stdout without a descriptor (a test's capture)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_BROKEN_PIPE


def run_as_command(main: Callable[[], int]) -> int:
    """Run `main`; a user's mistake becomes one line on stderr and a non-zero exit.

    SIGINT and SIGTERM end the run with one line and 130 / 143 (128 + the signal), after the
    publish has removed its staging. A closed stdout ends it quietly with 141 (128 + SIGPIPE).
    numpy's floating-point warnings are off: the readers range-check values, and a warning
    would only be noise on the user's terminal.
    """
    import numpy as np  # not at the top: `--help` and `--version` need no numpy

    try:
        with _terminate_as_exception(), np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            code = main()
            sys.stdout.flush()  # a reader that went away shows here, not in Python's exit
            return code
    except BrokenPipeError:
        return _reader_gone()
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("error: interrupted; no report was published", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print("error: terminated; no report was published", file=sys.stderr)
        return EXIT_TERMINATED
