"""Node runtime: `python -m handler`, inputs from the environment (or --inputs FILE).

The last line of stdout is `{"REPORT_ID": ..., "EFFICIENCY_LEVEL": ...}`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import orjson

from handler.entry import leave  # first of the package: before numpy is imported

# isort: split
from handler.command_line import (
    LOGGER,
    OneLineParser,
    chosen_store,
    common_parent,
    configure_logging,
    execution_options,
    execution_parent,
    log_detail,
    run_as_command,
    store_parent,
    warning_lines,
)
from handler.errors import InputError, StorageError
from handler.storage.local import read_local_file

if TYPE_CHECKING:
    from handler.outputs import NodeOutputs
    from handler.pipeline import RunResult

INPUTS_OPTION: Final = "--inputs"
OUTPUTS_OPTION: Final = "--outputs"


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="python -m handler",
        parents=[store_parent(), execution_parent(), common_parent()],
        description=(
            "Run the 'Evaluate prelabeling efficiency' node. Inputs come from environment "
            "variables named as node.json's keys (GT_DATASET, PRED_DATASET, IOU_MIN, IOU_PERFECT, "
            "CONFIDENCE_THRESHOLD) or from --inputs FILE. Prints the outputs as JSON on the last line."
        ),
    )
    parser.add_argument(
        INPUTS_OPTION, type=Path, metavar="FILE", help="JSON object of inputs (instead of the environment)"
    )
    parser.add_argument(
        OUTPUTS_OPTION, type=Path, metavar="FILE", help="also write the outputs JSON object here"
    )
    return parser


def _raw_inputs(path: Path | None, environ: Mapping[str, str]) -> dict[str, Any]:
    if path is None:
        from handler.inputs import read_environment

        return read_environment(environ)
    try:
        raw = orjson.loads(read_local_file(str(path), INPUTS_OPTION))  # a regular file, of bounded size
    except StorageError as error:
        raise InputError(f"{path}: cannot read the inputs file ({error})", INPUTS_OPTION) from None
    except orjson.JSONDecodeError as error:  # invalid UTF-8 too
        raise InputError(
            f"{path}: line {error.lineno} column {error.colno}: expected a JSON object ({error.msg})",
            INPUTS_OPTION,
        ) from None
    if not isinstance(raw, dict):
        raise InputError(f"{path}: expected a JSON object of inputs, got {type(raw).__name__}", INPUTS_OPTION)
    return raw


def _write_outputs(outputs: NodeOutputs, path: Path) -> None:
    try:
        outputs.write(path)
    except OSError as error:
        raise InputError(f"{path}: cannot write the outputs ({error.strerror})", OUTPUTS_OPTION) from None


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """The node; `environ` stands for the process environment (tests run the node in-process)."""
    args = _parser().parse_args(argv)
    configure_logging(args)

    def node() -> int:
        # The run's code is imported here, after the arguments: `--help` and `--version` answer
        # without loading the pipeline, the report models and jinja2 (tests/node/test_startup.py);
        # and after the inputs and the store are checked, so a mistake there is told without them.
        from handler.inputs import parse_inputs

        inputs = parse_inputs(_raw_inputs(args.inputs, os.environ if environ is None else environ))
        store = chosen_store(args)
        from handler.pipeline import log_to_stderr, run

        def announce(result: RunResult) -> None:
            log_detail(result.findings, result.location)
            if result.findings.reason is None:  # the one recommendation, as the page and the CLI give it
                LOGGER.info("recommended: %s", result.findings.recommendation.says)
            for line in warning_lines(result.findings):
                # one write per line: a signal between a line and its newline would glue the
                # "no report was published" error to it
                sys.stderr.write(f"{line}\n")
                sys.stderr.flush()
            if args.outputs is not None:
                _write_outputs(result.outputs, args.outputs)
            print(result.outputs.to_json(), flush=True)

        run(inputs, store, log=log_to_stderr, execution=execution_options(args), announce=announce)
        return 0

    return run_as_command(node)


if __name__ == "__main__":
    leave(main())
