"""`prelabel-eval`: the human CLI over the node's code path.

prelabel-eval GT PRED [--iou-min V] [--iou-perfect V] [--confidence-threshold V]  (defaults: node.json)
              [--seconds-accept|nudge|relabel|delete|draw S] [-q | -v] [--version]
prelabel-eval list                                   (report ids, latest first)
prelabel-eval show REPORT_ID|latest [--html | --outcomes | --outputs]
prelabel-eval gc [--older-than DURATION]             (staging left by interrupted runs)
prelabel-eval compare GT PRED_A PRED_B [--json] [--html FILE]  (which predictions help more)

Every line of an `examples:` epilog runs in tests/project/test_examples.py.
"""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import fields
from pathlib import Path
from typing import Final

import orjson

from handler.comparison import compare
from handler.datasets import format_names
from handler.engine.timecost import ASSUMED, TimeCosts
from handler.errors import InputError
from handler.inputs import input_spec, parse_inputs, select_options
from handler.outputs import NodeOutputs
from handler.pipeline import PHASES, PhaseLog, RunResult, log_to_stderr, quiet, run
from handler.progress import ProgressBar, terminal_progress
from handler.report.asset import (
    SAFE_AGE_SECONDS,
    collect_garbage,
    latest_report,
    list_reports,
    parse_duration,
    read_report_part,
)
from handler.report.compare import render_compare_html
from handler.report.compare import summary as compare_summary
from handler.report.html import duration
from handler.report.model import TimeSaved
from handler.report.slices import read_slices
from handler.runtime import (
    add_common_options,
    add_execution_options,
    add_store_option,
    configure_logging,
    execution_options,
    guarded,
    log_detail,
    store_uri,
)
from handler.storage import Store, open_store

# The node inputs the CLI takes as options (the two datasets are its positional arguments).
THRESHOLD_KEYS: Final = ("IOU_MIN", "IOU_PERFECT", "CONFIDENCE_THRESHOLD")
# `show` prints one part of the stored report; the default is the findings JSON.
SHOW_PARTS: Final = {
    "html": "the HTML page",
    "outcomes": "outcomes.jsonl: one JSON line per GT box and kept prediction",
    "outputs": "the node's outputs object (REPORT_ID, EFFICIENCY_LEVEL)",
}
LATEST: Final = "latest"
# Run from the project folder (the shipped examples/); tests/project/test_examples.py runs each line.
RUN_EXAMPLES: Final = """examples (from the project folder):
  prelabel-eval examples/gt.json examples/predictions.jsonl
  prelabel-eval examples/gt.json examples/predictions.jsonl --iou-min 0.50 --confidence-threshold 0.3 -v
  prelabel-eval examples/gt.json examples/predictions.jsonl --seconds-draw 30 --json
"""
LIST_EXAMPLES: Final = """examples:
  prelabel-eval list
"""
SHOW_EXAMPLES: Final = """examples:
  prelabel-eval show latest
  prelabel-eval show latest --html
  prelabel-eval show latest --outputs
"""
COMPARE_EXAMPLES: Final = """examples (from the project folder):
  prelabel-eval compare examples/gt.json examples/predictions.jsonl examples/predictions.jsonl
  prelabel-eval compare examples/gt.json examples/predictions.jsonl examples/predictions.jsonl --json
"""


def _add_node_input(parser: argparse.ArgumentParser, key: str) -> None:
    """--iou-min and the like: default, label and options from node.json (validated there too)."""
    spec = input_spec(key)
    accepts = " ".join(select_options(key)) if spec["type"] == "select" else spec["description"]
    parser.add_argument(
        "--" + key.lower().replace("_", "-"),
        default=spec["default"],
        help=f"{spec['label']}: {accepts} (default {spec['default']})",
    )


def _add_time_costs(parser: argparse.ArgumentParser) -> None:
    """--seconds-<action> for every labeler action of the time estimate (not node inputs)."""
    group = parser.add_argument_group("time estimate", "seconds a labeler spends per action")
    for item in fields(TimeCosts):
        why = ASSUMED.get(item.name, "Su, Deng, Fei-Fei 2012")
        group.add_argument(
            f"--seconds-{item.name}",
            type=float,
            default=item.default,
            metavar="S",
            help=f"{item.name} one box (default {item.default}: {why})",
        )


def time_costs(args: argparse.Namespace) -> TimeCosts:
    try:
        return TimeCosts(**{item.name: getattr(args, f"seconds_{item.name}") for item in fields(TimeCosts)})
    except ValueError as error:
        raise InputError(str(error)) from None


def _run_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="prelabel-eval",
        description=(
            "How much labeling work would these predictions save? Compares PRED with the trusted "
            "GT on the same images, sorts every box into correct / shifted / class-confused / "
            "false positive / false negative, and stores a report. "
            "See also: prelabel-eval list --help, prelabel-eval show --help."
        ),
        epilog=RUN_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "gt", metavar="GT", help="ground-truth dataset: a file, a folder, s3:// URI or dataset id"
    )
    parser.add_argument("pred", metavar="PRED", help="prediction dataset on the same images")
    for key in THRESHOLD_KEYS:
        _add_node_input(parser, key)
    parser.add_argument("--gt-format", choices=format_names(), help="force the GT format (default: detected)")
    parser.add_argument(
        "--pred-format", choices=format_names(), help="force the prediction format (default: detected)"
    )
    add_store_option(parser)
    parser.add_argument("--json", action="store_true", help="print the findings JSON instead of the summary")
    add_common_options(parser)
    parser.add_argument(
        "--slices",
        metavar="FILE",
        help="JSON object of slice name -> asset ids: each slice gets its own score, grade and interval",
    )
    _add_time_costs(parser)
    add_execution_options(parser)
    return parser


def _list_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="prelabel-eval list",
        description="Print the ids of the stored reports, latest first (ids sort by creation time).",
        epilog=LIST_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_store_option(parser)
    return parser


def _show_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="prelabel-eval show",
        description="Print a stored report: by default its findings JSON.",
        epilog=SHOW_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("report_id", metavar="REPORT_ID", help=f"a report id, or {LATEST!r} for the newest")
    which = parser.add_mutually_exclusive_group()
    for part, what in SHOW_PARTS.items():
        which.add_argument(f"--{part}", dest="part", action="store_const", const=part, help=f"print {what}")
    add_store_option(parser)
    return parser


def summary(result: RunResult) -> str:
    findings = result.findings
    lines = [
        findings.verdict,
        f"assistance score {findings.assistance_score:.3f} · {findings.efficiency_level}",
        "  ".join(f"{key.replace('_', ' ')} {count}" for key, count in findings.counts.outcomes().items()),
        _time_line(findings.time),
        *(f"{warning.severity}: {warning.message}" for warning in findings.warnings),
        f"report {result.outputs.report_id} at {result.location}report.html",
    ]
    return "\n".join(lines)


def _time_line(time: TimeSaved) -> str:
    return (
        f"labeler time: about {duration(time.with_predictions_seconds)} with the predictions, "
        f"{duration(time.from_scratch_seconds)} from scratch"
    )


def _evaluate(argv: list[str]) -> int:
    args = _run_parser().parse_args(argv)
    raw = {"GT_DATASET": args.gt, "PRED_DATASET": args.pred}
    raw.update({key: getattr(args, key.lower()) for key in THRESHOLD_KEYS})
    raw.update({k: v for k, v in (("GT_FORMAT", args.gt_format), ("PRED_FORMAT", args.pred_format)) if v})
    inputs, store = parse_inputs(raw), open_store(store_uri(args.store))
    # The CLI's phase lines are -v's; by default an interactive terminal gets the progress bar.
    configure_logging(args, default=logging.WARNING)
    with terminal_progress(PHASES) as bar:
        execution = execution_options(args)
        slices = read_slices(args.slices) if args.slices else None
        result = run(inputs, store, _phase_log(args, bar), time_costs(args), execution, slices)
    log_detail(result.findings, result.location)
    print(result.findings.to_json().decode() if args.json else summary(result))
    return 0


def _phase_log(args: argparse.Namespace, bar: ProgressBar | None) -> PhaseLog:
    if args.verbose:
        return log_to_stderr
    return quiet if args.quiet or bar is None else bar


def _list(argv: list[str]) -> int:
    args = _list_parser().parse_args(argv)
    for report_id in list_reports(open_store(store_uri(args.store))):
        print(report_id)
    return 0


def _report_id(store: Store, given: str) -> str:
    return latest_report(store) if given == LATEST else given


def _outputs(findings: bytes) -> bytes:
    document = orjson.loads(findings)
    return NodeOutputs(document["report_id"], document["efficiency_level"]).to_json().encode("utf-8")


def _show(argv: list[str]) -> int:
    args = _show_parser().parse_args(argv)
    store = open_store(store_uri(args.store))
    part, report_id = args.part or "findings", _report_id(store, args.report_id)
    if part == "outputs":
        content = _outputs(read_report_part(store, report_id, "findings"))
    else:
        content = read_report_part(store, report_id, part)
    if content:  # an empty outcomes.jsonl stays empty: no blank line for a JSON Lines reader
        sys.stdout.buffer.write(content.rstrip(b"\n") + b"\n")
    sys.stdout.flush()
    return 0


def _gc(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="prelabel-eval gc",
        description="Delete what interrupted runs left in the store: report objects without a manifest.",
    )
    parser.add_argument(
        "--older-than",
        default=f"{SAFE_AGE_SECONDS // 3600}h",
        metavar="DURATION",
        help="only staging older than this: 90s, 30m, 24h, 7d (default %(default)s, so no live run is hit)",
    )
    add_store_option(parser)
    args = parser.parse_args(argv)
    store = open_store(store_uri(args.store))
    deleted = collect_garbage(store, parse_duration(args.older_than))
    print(f"deleted {len(deleted)} staging objects from {store.uri}")
    return 0


def _compare_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="prelabel-eval compare",
        description=(
            "Which of two prediction sets leaves less correction work on the same GT? Runs both, "
            "pairs the images scored in both by asset id, and puts a paired bootstrap interval on "
            "B - A of the assistance score and of the labeler time saved. Stores no report."
        ),
        epilog=COMPARE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("gt", metavar="GT", help="ground-truth dataset (as for a run)")
    parser.add_argument("pred_a", metavar="PRED_A", help="prediction set A on the same images")
    parser.add_argument("pred_b", metavar="PRED_B", help="prediction set B on the same images")
    for key in THRESHOLD_KEYS:
        _add_node_input(parser, key)
    parser.add_argument("--gt-format", choices=format_names(), help="force the GT format (default: detected)")
    parser.add_argument(
        "--pred-format", choices=format_names(), help="force both prediction formats (default: detected)"
    )
    parser.add_argument("--json", action="store_true", help="print the comparison JSON, not the summary")
    parser.add_argument("--html", metavar="FILE", help="also write the comparison page (HTML) to FILE")
    add_store_option(parser)
    add_common_options(parser)
    _add_time_costs(parser)
    add_execution_options(parser)
    return parser


def _compare(argv: list[str]) -> int:
    args = _compare_parser().parse_args(argv)
    configure_logging(args, default=logging.WARNING)
    inputs = {key: getattr(args, key.lower()) for key in THRESHOLD_KEYS}
    inputs.update({k: v for k, v in (("GT_FORMAT", args.gt_format), ("PRED_FORMAT", args.pred_format)) if v})
    store = open_store(store_uri(args.store))
    found = compare(
        args.gt,
        args.pred_a,
        args.pred_b,
        inputs=inputs,
        costs=time_costs(args),
        store=store,
        execution=execution_options(args),
    )
    if args.html:
        try:
            Path(args.html).write_text(render_compare_html(found), encoding="utf-8")
        except OSError as error:
            raise InputError(f"cannot write the comparison page to {args.html}: {error.strerror}") from None
    print(found.to_json().decode() if args.json else compare_summary(found))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    commands = {"show": _show, "list": _list, "gc": _gc, "compare": _compare}
    if argv[:1] and argv[0] in commands:
        return guarded(lambda: commands[argv[0]](argv[1:]))
    return guarded(lambda: _evaluate(argv))


if __name__ == "__main__":
    sys.exit(main())
