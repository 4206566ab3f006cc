"""`prelabel-eval`: the human CLI over the node's code path.

prelabel-eval [run] GT PRED [--iou-min V] [--iou-perfect V] [--confidence-threshold V]  (defaults: node.json)
              [--score-on auto|boxes|masks]
              [--seconds-accept|nudge|relabel|delete|draw S] [-q | -v] [--version]
prelabel-eval list                                   (report ids, latest first)
prelabel-eval show REPORT_ID|latest [--json | --html | --outcomes [--format F] | --outputs | --class-map
                                    | --queue | --sketches]
prelabel-eval gc [--older-than DURATION]             (staging left by interrupted runs)
prelabel-eval compare GT PRED_A PRED_B [--json] [--html FILE] [--transitions FILE]  (which helps more)
prelabel-eval calibrate LOG... [--out costs.json]    (a team's seconds per action from its tool's logs)
prelabel-eval export REPORT_ID|latest --to TOOL --out PATH [--policy POLICY] [--image-root PREFIX]
                                   [--mask-shape mask|polygon]

argparse sub-parsers; an option block that several commands take is declared once, as a parent
parser (`_node_input_parent`, `_dataset_parent`, `_time_cost_parent`, and command_line's); every
command is one `Command` record, built by one `_add`. Every line of
an `examples:` epilog runs in tests/project/test_examples.py.

Each command imports the code it runs when it runs: every start builds the whole parser, and the
pipeline, the report models and rich are not what `--help`, `list` or `show` need, so every start
stays short (tests/node/test_startup.py keeps it so).
"""

from __future__ import annotations

import argparse
import difflib
import io
import logging
import mimetypes
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Final, NoReturn, get_args

import msgspec
import orjson
from msgspec.structs import replace

from handler.entry import leave  # first of the package: before numpy is imported

# isort: split
from handler.command_line import (
    OneLineParser,
    add_read_options,
    add_version_option,
    chosen_store,
    common_parent,
    configure_logging,
    execution_options,
    execution_parent,
    log_detail,
    option_block,
    read_inputs,
    run_as_command,
    store_parent,
    warning_lines,
)
from handler.datasets import format_names
from handler.datasets.read_options import option_flag
from handler.engine.timecost import ACTIONS, ASSUMED, CITED, SECONDS_MAX, Shape, TimeCosts
from handler.errors import InputError, quoted
from handler.inputs import (
    IMAGES_KEY,
    IMAGES_TITLE,
    ConfidenceThreshold,
    NodeInputs,
    either_iou,
    input_spec,
    input_value,
    parse_inputs,
    read_time_costs,
    select_options,
)
from handler.report.exports import MASK_SHAPES, POLICIES
from handler.report.exports.targets import EXPORT_TARGETS
from handler.report.ledger import OUTCOME_FORMATS, OutcomeFormat
from handler.report.publish import (
    SAFE_AGE_SECONDS,
    latest_report,
    read_report_part,
    reading_part,
    report_location,
)
from handler.storage.registry import open_target

if TYPE_CHECKING:
    from handler.pipeline import PhaseLog, RunResult
    from handler.report.findings import Findings, TimeSaved
    from handler.storage import Store

PROG: Final = "prelabel-eval"
# `prelabel-eval GT PRED` is `prelabel-eval run GT PRED`: the command a user types most goes unnamed.
DEFAULT_COMMAND: Final = "run"
# Words that go to the top-level parser rather than to the default command.
TOP_LEVEL: Final = ("-h", "--help", "--version")
# The node inputs the CLI takes as options (the two datasets are its positional arguments).
NODE_OPTION_KEYS: Final = ("IOU_MIN", "IOU_PERFECT", "CONFIDENCE_THRESHOLD", "SCORE_ON")
# `show` prints one part of the stored report; the default is the findings JSON.
SHOW_PARTS: Final = {
    "json": "findings.json: the findings document",
    "html": "the HTML page",
    "outcomes": "the ledger: a row per outcome (matched pair, false positive, false negative), in --format",
    "outputs": "the node's outputs object (REPORT_ID, EFFICIENCY_LEVEL)",
    "class_map": "class_map.json: the class mapping a warning proposes (review it, then --pred-class-map)",
    "queue": "review_queue.csv: every image, most expected correction time first, as CSV",
    "sketches": "sketches.json: the boxes (and pictures) the page draws small, image by image",
}
LATEST: Final = "latest"
# Run from the project folder (the shipped examples/); tests/project/test_examples.py runs each line.
RUN_EXAMPLES: Final = """examples (from the project folder):
  prelabel-eval examples/gt.json examples/predictions.jsonl
  prelabel-eval examples/gt.json examples/predictions.jsonl --iou-min 0.50 --confidence-threshold 0.3 -v
  prelabel-eval run examples/gt.json examples/predictions.jsonl --seconds-draw 30 --json
"""
LIST_EXAMPLES: Final = """examples:
  prelabel-eval list
"""
SHOW_EXAMPLES: Final = """examples:
  prelabel-eval show latest
  prelabel-eval show latest --json
  prelabel-eval show latest --html
  prelabel-eval show latest --outputs
  prelabel-eval show latest --queue
  prelabel-eval show latest --outcomes --format csv
"""
_EXAMPLE_SETS: Final = "examples/gt.json examples/predictions.jsonl examples/predictions.jsonl"
COMPARE_EXAMPLES: Final = f"""examples (from the project folder):
  prelabel-eval compare {_EXAMPLE_SETS}
  prelabel-eval compare {_EXAMPLE_SETS} --json
  prelabel-eval compare {_EXAMPLE_SETS} --transitions /tmp/moves.csv
"""
CALIBRATE_EXAMPLES: Final = """examples (from the project folder):
  prelabel-eval calibrate examples/label_studio_export.json --out /tmp/costs.json
  prelabel-eval examples/gt.json examples/predictions.jsonl --time-costs /tmp/costs.json
"""
EXPORT_EXAMPLES: Final = """examples (after a run):
  prelabel-eval export latest --to label-studio --out /tmp/tasks.json --image-root "/data/local-files/?d="
  prelabel-eval export latest --to cvat --out /tmp/annotations.xml --policy single
"""
GC_EXAMPLES: Final = """examples:
  prelabel-eval gc
  prelabel-eval gc --older-than 7d
"""


def _node_input_type(key: str) -> Callable[[str], Any]:
    """argparse `type=`: the value parsed by the node's own rules, refused naming the option."""

    def parsed(text: str) -> Any:
        try:
            value = input_value(key, text)
        except InputError as error:
            if (deferred := either_iou(key, text)) is not None:
                return deferred  # the other IoU's value: checked with it (`swapped_ious`)
            raise argparse.ArgumentTypeError(error.detail) from None
        if isinstance(value, ConfidenceThreshold) and value.replaced:
            # The node reads a non-number as 0 (the platform's rule); a typed option is refused.
            raise argparse.ArgumentTypeError(f"{quoted(text)} is not a number: expected 0 to 1, e.g. 0.5")
        return value

    return parsed


def _node_input_parent() -> OneLineParser:
    """--iou-min and the like: default, label and options from node.json (checked by its rules)."""
    parent = option_block()
    for key in NODE_OPTION_KEYS:
        spec = input_spec(key)
        accepts = " ".join(select_options(key)) if spec["type"] == "select" else spec["description"]
        parent.add_argument(
            option_flag(key),
            type=_node_input_type(key),
            default=spec["default"],
            help=f"{spec['label']}: {accepts} (default {spec['default']})",
        )
    return parent


def _dataset_parent() -> OneLineParser:
    """How the datasets are read, for `run` and `compare` (PRED: both prediction sets)."""
    parent = option_block()
    parent.add_argument("--gt-format", choices=format_names(), help="force the GT format (default: detected)")
    parent.add_argument(
        "--pred-format", choices=format_names(), help="force the prediction format (default: detected)"
    )
    add_read_options(parent)
    return parent


def _seconds_type(action: str) -> Callable[[str], float]:
    """argparse `type=`: seconds for `action`, checked by TimeCosts' own rule."""

    def checked(text: str) -> float:
        try:
            seconds = float(text)
            TimeCosts.from_document({"seconds": {action: seconds}})
            return seconds
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{quoted(text)}: expected seconds, a number from 0 to {SECONDS_MAX:g}"
            ) from None

    return checked


def _time_cost_parent() -> OneLineParser:
    """--seconds-<action> for every labeler action of the time estimate, or a costs file (not node inputs)."""
    parent = option_block()
    group = parent.add_argument_group("time estimate", "seconds a labeler spends per action")
    defaults = TimeCosts()
    for action in ACTIONS:
        why = CITED.get(action, "").split(":")[0] or f"assumed: {ASSUMED[action]}"
        group.add_argument(
            f"--seconds-{action}",
            type=_seconds_type(action),
            metavar="S",
            help=f"{action} one box (default {getattr(defaults, action)}: {why})",
        )
    group.add_argument(
        "--time-costs",
        metavar="FILE",
        help=f"a costs file ({PROG} calibrate writes one): the seconds, and whose they are, on the page",
    )
    return parent


def time_costs(args: argparse.Namespace) -> TimeCosts:
    given = {action: getattr(args, f"seconds_{action}") for action in ACTIONS}
    given = {action: seconds for action, seconds in given.items() if seconds is not None}
    if args.time_costs is None:
        return TimeCosts.from_document({"seconds": given})
    if given:
        flags = ", ".join(f"--seconds-{action}" for action in given)
        raise InputError(f"give the seconds in the costs file or as {flags}, not both", "--time-costs")
    return read_time_costs(args.time_costs, "--time-costs")


def _node_inputs(args: argparse.Namespace, gt: str, pred: str) -> NodeInputs:
    """The inputs of a command line: the options come parsed (each by its `type=`), and are not
    parsed again; the formats only when forced."""
    given = {key: getattr(args, key.lower()) for key in NODE_OPTION_KEYS}
    forced = {"GT_FORMAT": args.gt_format, "PRED_FORMAT": args.pred_format}
    parsed = given | {key: value for key, value in forced.items() if value} | read_inputs(args)
    images = getattr(args, "images", None)  # `run`'s option, checked with the node's inputs
    raw = {"GT_DATASET": gt, "PRED_DATASET": pred} | ({IMAGES_KEY: images} if images else {})
    return parse_inputs(raw, parsed)


class Command(msgspec.Struct, frozen=True):
    """One subcommand: its name, the option blocks it takes, its help, its own arguments, and the
    function that runs it. `_command_list` lists them all; `_add` builds each one the same way."""

    name: str
    blocks: Callable[[], list[OneLineParser]]
    summary: str
    description: str
    examples: str
    run: Callable[[argparse.Namespace], int]
    arguments: Callable[[OneLineParser], None] = lambda parser: None


def _evaluation_blocks() -> list[OneLineParser]:
    """What a command that evaluates takes: the node's inputs, how the datasets are read, the store,
    -q/-v, the time costs, and where the shards run."""
    return [
        _node_input_parent(),
        _dataset_parent(),
        store_parent(),
        common_parent(),
        _time_cost_parent(),
        execution_parent(),
    ]


def _stored_blocks() -> list[OneLineParser]:
    return [store_parent()]


def _report_id_argument(parser: OneLineParser) -> None:
    parser.add_argument("report_id", metavar="REPORT_ID", help=f"a report id, or {LATEST!r} for the newest")


def _run_arguments(parser: OneLineParser) -> None:
    parser.add_argument(
        "gt", metavar="GT", help="ground-truth dataset: a file, a folder, s3:// URI or dataset id"
    )
    parser.add_argument("pred", metavar="PRED", help="prediction dataset on the same images")
    parser.add_argument("--json", action="store_true", help="print the findings JSON instead of the summary")
    parser.add_argument(
        "--images",
        metavar="ROOT",
        help=f"{IMAGES_TITLE} ({IMAGES_KEY}; default: a YOLO folder's images/, a VOC folder's JPEGImages/)",
    )
    parser.add_argument(
        "--slices",
        metavar="FILE",
        help="JSON object of slice name -> asset ids: each slice gets its own score, grade and interval",
    )


def _show_arguments(parser: OneLineParser) -> None:
    _report_id_argument(parser)
    which = parser.add_mutually_exclusive_group()
    for part, what in SHOW_PARTS.items():
        flag = "--" + part.replace("_", "-")
        which.add_argument(flag, dest="part", action="store_const", const=part, help=f"print {what}")
    parser.add_argument(
        "--format",
        choices=list(OUTCOME_FORMATS),
        help="with --outcomes: " + "; ".join(f"{f.name}, {f.help}" for f in OUTCOME_FORMATS.values()),
    )


def _compare_arguments(parser: OneLineParser) -> None:
    parser.add_argument("gt", metavar="GT", help="ground-truth dataset (as for a run)")
    parser.add_argument("pred_a", metavar="PRED_A", help="prediction set A on the same images")
    parser.add_argument("pred_b", metavar="PRED_B", help="prediction set B on the same images")
    parser.add_argument("--json", action="store_true", help="print the comparison JSON, not the summary")
    parser.add_argument("--html", metavar="FILE", help="also write the comparison page (HTML) to FILE")
    parser.add_argument(
        "--transitions",
        metavar="FILE",
        help="also write every GT box's outcome under A and under B, a row each, to FILE "
        "(.csv, .jsonl or .parquet, by its suffix)",
    )


def _calibrate_arguments(parser: OneLineParser) -> None:
    parser.add_argument(
        "logs", metavar="LOG", nargs="+", help="Label Studio JSON exports or CVAT events CSVs"
    )
    parser.add_argument(
        "--out", default="costs.json", metavar="FILE", help="the costs file (default %(default)s)"
    )
    parser.add_argument(
        "--shape",
        choices=get_args(Shape),
        help="what the labelers drew (default: a Label Studio log's own regions, else boxes; "
        "CVAT's events do not say): masks fits a mask's seconds",
    )


def _export_arguments(parser: OneLineParser) -> None:
    _report_id_argument(parser)
    targets = "; ".join(f"{name}: {target.help}" for name, target in EXPORT_TARGETS.items())
    parser.add_argument("--to", required=True, choices=list(EXPORT_TARGETS), help=targets)
    parser.add_argument(
        "--out",
        required=True,
        metavar="PATH",
        help="the file to write, a path or an s3:// URI (yolo: the folder; label-studio: .json)",
    )
    parser.add_argument(
        "--policy",
        nargs="+",
        default=[POLICIES[0]],
        metavar="POLICY",
        help=f"which thresholds: {', '.join(POLICIES[:-1])} or threshold X (default %(default)s)",
    )
    parser.add_argument(
        "--image-root",
        default="",
        metavar="PREFIX",
        help="label-studio: put before each asset id in data.image, so Label Studio opens the image",
    )
    parser.add_argument(
        "--mask-shape",
        choices=MASK_SHAPES,
        default=MASK_SHAPES[0],
        help="a report scored on masks, to label-studio and cvat: the masks as they were scored (mask: "
        "brushes, CVAT masks) or as polygons (polygon); coco writes RLE, yolo-seg "
        "polygons (default %(default)s)",
    )


def _gc_arguments(parser: OneLineParser) -> None:
    parser.add_argument(
        "--older-than",
        default=f"{SAFE_AGE_SECONDS // 3600}h",
        metavar="DURATION",
        help="only staging older than this: 90s, 30m, 24h, 7d (default %(default)s, so no live run is hit)",
    )


def _command_list() -> tuple[Command, ...]:
    """Every subcommand, in the order of `--help` (the functions they run are defined below)."""
    return (
        Command(
            DEFAULT_COMMAND,
            _evaluation_blocks,
            f"evaluate PRED against GT and store a report (the default: `{PROG} GT PRED`)",
            "How much labeling work would these predictions save? Compares PRED with the trusted "
            "GT on the same images, sorts every box into correct / shifted / class-confused / "
            "false positive / false negative, and stores a report.",
            RUN_EXAMPLES,
            _evaluate,
            _run_arguments,
        ),
        Command(
            "list",
            _stored_blocks,
            "list the stored reports, latest first: id, date, grade, score, threshold, IoU bounds, inputs",
            "List the stored reports, latest first (ids sort by creation time), a line each: the id, "
            "the date, the grade, the assistance score and the predictions' file. An empty store prints "
            "nothing, and says so on stderr.",
            LIST_EXAMPLES,
            _list,
        ),
        Command(
            "show",
            _stored_blocks,
            "print a stored report (a summary, or its findings JSON, page, outcomes, outputs)",
            "Print a stored report: by default a summary for people (what was evaluated, the verdict, "
            "the counts, the recommendation); one of the flags prints a part as stored.",
            SHOW_EXAMPLES,
            _show,
            _show_arguments,
        ),
        Command(
            "compare",
            _evaluation_blocks,
            "which of two prediction sets leaves less correction work",
            "Which of two prediction sets leaves less correction work on the same GT? Runs both, "
            "pairs the images scored in both by asset id, and puts a paired bootstrap interval on "
            "B - A of the assistance score and of the labeler time saved. Stores no report.",
            COMPARE_EXAMPLES,
            _compare,
            _compare_arguments,
        ),
        Command(
            "calibrate",
            lambda: [common_parent()],
            "fit a team's seconds per action from its labeling tool's logs",
            "Fit the seconds a team's labelers spend per action (accept, nudge, relabel, delete, draw) "
            "from a Label Studio JSON export (each annotation's lead_time and what it changed in the "
            "prediction it started from) or a CVAT events CSV (each action's own time). Prints each "
            "action's seconds with a bootstrap interval over tasks and how many tasks show it, and "
            "writes a costs file for --time-costs. An action too few tasks show keeps its default.",
            CALIBRATE_EXAMPLES,
            _calibrate,
            _calibrate_arguments,
        ),
        Command(
            "export",
            _stored_blocks,
            "write the pre-labels a report's policy keeps, for a labeling tool to import",
            "Write the predictions a stored report's policy pre-labels, in a labeling tool's import format, "
            "from the report alone (no dataset is read again). By default the report's recommendation "
            "(routing.json): each class at its threshold there, none of the classes it leaves to draw; "
            "`--policy per-class`: each class at its own fastest threshold; `--policy single`: every class "
            "at the recommendation's single threshold; `--policy threshold X`: every class at X.",
            EXPORT_EXAMPLES,
            _export,
            _export_arguments,
        ),
        Command(
            "gc",
            _stored_blocks,
            "delete what interrupted runs left in the store",
            "Delete what interrupted runs left in the store: report objects without a manifest.",
            GC_EXAMPLES,
            _gc,
            _gc_arguments,
        ),
    )


def _add(commands: argparse._SubParsersAction[OneLineParser], command: Command) -> None:
    parser = commands.add_parser(
        command.name,
        # `prelabel-eval run --help` says `run` (the top-level help says it is the default command).
        prog=f"{PROG} {command.name}",
        help_command=f"{PROG} {command.name} --help",
        parents=command.blocks(),
        help=command.summary,
        description=command.description,
        epilog=command.examples,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.arguments(parser)
    parser.set_defaults(command=command.run)


def _named_commands() -> list[str]:
    """The commands a user names (`run` is the default, named or not)."""
    return [command.name for command in _command_list() if command.name != DEFAULT_COMMAND]


def parser() -> OneLineParser:
    """`prelabel-eval`, its commands and their options (`parse_command_line` picks the command)."""
    top = OneLineParser(
        prog=PROG,
        usage=f"{PROG} [run] GT PRED [options]\n       {PROG} {{{','.join(_named_commands())}}} [options]",
        description=(
            "How much labeling work would these predictions save? "
            f"`{PROG} GT PRED` evaluates PRED against GT and stores a report; the other commands "
            "read the store or compare two prediction sets."
        ),
        epilog=f"A command's options and examples: {PROG} COMMAND --help (the default: {PROG} run --help).",
    )
    add_version_option(top)
    commands = top.add_subparsers(title="commands", metavar="COMMAND", parser_class=OneLineParser)
    for command in _command_list():
        _add(commands, command)
    return top


def command_parsers(top: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Each command's parser by name, in the order of `--help`."""
    found = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    return dict(found.choices)


def parse_command_line(argv: list[str]) -> argparse.Namespace:
    """The command and its options; `GT PRED ...` is the default command `run`; a mistyped command
    is refused naming the closest (`lst` → `list`), not taken for a GT path."""
    top = parser()
    names = list(command_parsers(top))
    first = argv[0] if argv else ""
    if not argv:
        top.error(f"expected GT PRED, or a command: {', '.join(names)}")
    if first not in names and first not in TOP_LEVEL:
        closest = _mistyped_command(first, names)
        if closest:
            top.error(
                f"unknown command {quoted(first)}: did you mean {closest!r}? (commands: {', '.join(names)})"
            )
        argv = [DEFAULT_COMMAND, *argv]
    return top.parse_args(argv)


def _mistyped_command(word: str, names: list[str]) -> str | None:
    """The command `word` is close to, when `word` cannot be a dataset (no path, URI or file name)."""
    if word.startswith("-") or any(mark in word for mark in "/\\.:") or os.path.exists(word):
        return None
    return next(iter(difflib.get_close_matches(word, names, n=1)), None)


def summary(result: RunResult) -> str:
    return findings_summary(result.findings, result.location)


def findings_summary(findings: Findings, location: str) -> str:
    """The run for people: what was evaluated, the verdict (with the recommendation), the figures."""
    from handler.sections.wording import counted

    data, parameters = findings.dataset, findings.parameters
    lines = [
        f"{data.pred_source} ({data.pred_format}) against {data.gt_source} ({data.gt_format}): "
        f"{counted(data.images, 'image')}, kept from confidence {parameters.confidence_threshold:g}, "
        f"a match from IoU {parameters.iou_min:g}, correct from IoU {parameters.iou_perfect:g}, "
        f"{findings.created_at}",
        findings.headline(),
        f"assistance score {findings.assistance_score:.3f} · {findings.efficiency_level}",
        "  ".join(f"{key.replace('_', ' ')} {count}" for key, count in findings.counts.outcomes().items()),
        _time_line(findings.time),
        *warning_lines(findings),
        f"report {findings.report_id} at {location}report.html",
    ]
    return "\n".join(lines)


def _summary_of_stored(document: bytes, location: str) -> bytes:
    from handler.report.findings import Findings

    return findings_summary(Findings.model_validate_json(document), location).encode()


def _time_line(time: TimeSaved) -> str:
    from handler.report.findings import duration

    return (
        f"labeler time: about {duration(time.with_predictions_seconds)} with the predictions, "
        f"{duration(time.from_scratch_seconds)} from scratch"
    )


def _phase_log(args: argparse.Namespace) -> AbstractContextManager[PhaseLog]:
    """The CLI's phase lines are -v's; by default an interactive terminal gets the progress bar
    (rich, imported only then: a pipe or a log file never draws one)."""
    from handler.pipeline import PHASES, log_to_stderr

    if args.quiet or args.verbose or not sys.stderr.isatty():
        return nullcontext(log_to_stderr)
    from handler.progress import phase_progress

    return phase_progress(PHASES, log_to_stderr)


def _evaluate(args: argparse.Namespace) -> int:
    from handler.datasets.slices import read_slices
    from handler.pipeline import run

    inputs, store = _node_inputs(args, args.gt, args.pred), chosen_store(args)
    configure_logging(args, default=logging.WARNING)
    with _phase_log(args) as log:
        execution = execution_options(args)
        slices = read_slices(args.slices) if args.slices else None
        result = run(inputs, store, log, time_costs(args), execution, slices)
    log_detail(result.findings, result.location)
    document = orjson.dumps(result.findings.document(), option=orjson.OPT_INDENT_2)
    print(document.decode() if args.json else summary(result))
    return 0


def listed_line(report_id: str, findings: dict[str, Any]) -> str:
    """A report in one line: id, date, grade, score, the settings it was scored at (confidence
    threshold, IoU bounds: what tells apart three reports of one file), then its inputs by short
    name (id first, for `cut`/`awk`)."""
    created = str(findings.get("created_at", "")).replace("T", " ").replace("+00:00", " UTC")
    dataset = _field(findings, "dataset")
    settings = _field(findings, "parameters")
    score = findings.get("assistance_score")
    return "  ".join(
        (
            report_id,
            created or "?",
            f"{findings.get('efficiency_level', '?')!s:<16}",
            f"{score:.2f}" if isinstance(score, float | int) else "?",
            f"conf ≥ {_number(settings.get('confidence_threshold'))}",
            f"IoU {_number(settings.get('iou_min'))}-{_number(settings.get('iou_perfect'))}",
            f"{_short(dataset.get('pred_source'))} vs {_short(dataset.get('gt_source'))}",
        )
    )


def _field(findings: dict[str, Any], name: str) -> dict[str, Any]:
    value = findings.get(name)
    return value if isinstance(value, dict) else {}


def _number(value: object) -> str:
    return f"{value:g}" if isinstance(value, float | int) else "?"


def _short(source: object) -> str:
    from handler.sections.wording import short_name  # `list` loads no findings code otherwise

    return short_name(source) if isinstance(source, str) and source else "?"


def _document(content: bytes) -> dict[str, Any]:
    """A stored findings document as a dict; {} for a damaged one (`list` still names the report)."""
    try:
        document = orjson.loads(content)
    except orjson.JSONDecodeError:
        return {}
    return document if isinstance(document, dict) else {}


def _list(args: argparse.Namespace) -> int:
    from handler.report.publish import FINDINGS_PART, list_reports

    store = chosen_store(args)
    report_ids = list_reports(store)
    for report_id in report_ids:
        print(listed_line(report_id, _document(read_report_part(store, report_id, FINDINGS_PART))))
    if not report_ids:  # stdout stays empty for a script; the person at the terminal is told why
        print(f"no reports in {store.uri} yet (run {PROG} GT PRED first)", file=sys.stderr)
    return 0


def _report_id(store: Store, given: str) -> str:
    return latest_report(store) if given == LATEST else given


def _outputs(findings: bytes) -> bytes:
    from handler.outputs import NodeOutputs

    document = orjson.loads(findings)
    return NodeOutputs(document["report_id"], document["efficiency_level"]).to_json().encode("utf-8")


def _show(args: argparse.Namespace) -> int:
    from handler.report.finishers import REPORT_PARTS

    part = args.part or "summary"
    if args.format and part != "outcomes":
        raise InputError("--format is for --outcomes: the other parts print as stored")
    store = chosen_store(args)
    report_id = _report_id(store, args.report_id)
    if part == "outcomes":
        return _show_outcomes(store, report_id, OUTCOME_FORMATS[args.format or "jsonl"])
    # the summary, the outputs and --json are views of the findings document
    stored = REPORT_PARTS["findings" if part in ("summary", "outputs", "json") else part]
    content = read_report_part(store, report_id, stored)
    with reading_part(report_id, stored):
        if part == "summary":
            content = _summary_of_stored(content, report_location(store, report_id))
        elif part == "outputs":
            content = _outputs(content)
        elif part == "json":  # stored compact, printed for people
            content = orjson.dumps(orjson.loads(content), option=orjson.OPT_INDENT_2)
    if content:
        sys.stdout.buffer.write(content.rstrip(b"\n") + b"\n")
    return 0


def _show_outcomes(store: Store, report_id: str, fmt: OutcomeFormat) -> int:
    """The ledger streamed to stdout, a chunk at a time (an empty ledger prints no line)."""
    from handler.report.ledger import write_outcomes

    if fmt.binary and sys.stdout.isatty():
        raise InputError(f"--format {fmt.name} is binary: redirect it to a file (> outcomes.{fmt.name})")
    write_outcomes(store, report_id, fmt, sys.stdout.buffer)
    return 0


def _export(args: argparse.Namespace) -> int:
    from handler.features.review.finisher import work_seconds
    from handler.report.exports import Policy, pre_labels
    from handler.report.finishers import REPORT_PARTS
    from handler.report.publish import PRE_LABELS, read_report_chunks
    from handler.sections.wording import counted

    try:
        policy = Policy.parse(args.policy)
    except ValueError as error:
        raise InputError(f"--policy {error}") from None
    store = chosen_store(args)
    report_id = _report_id(store, args.report_id)
    findings = read_report_part(store, report_id, REPORT_PARTS["findings"])
    chunks = read_report_chunks(
        store, report_id, PRE_LABELS, f"(made before `{PROG} export` existed: run it again)"
    )
    with reading_part(report_id, REPORT_PARTS["queue"]):
        queue = work_seconds(read_report_part(store, report_id, REPORT_PARTS["queue"]))
    labels = replace(pre_labels(report_id, findings, chunks, policy, queue), mask_shape=args.mask_shape)
    target = EXPORT_TARGETS[args.to]
    written = _write_files(args.out, target.files(labels, PurePath(args.out), args.image_root))
    boxes = labels.boxes
    version = f", model_version {labels.model_version!r}" if target.carries_model_version else ""
    empty = labels.empty_masks
    left_out = f", {counted(empty, 'pre-label')} with an empty mask left out" if empty else ""
    print(
        f"wrote {counted(len(boxes), 'pre-label')} on {counted(len(boxes.asset_ids), 'image')} "
        f"({policy} policy{version}{left_out}) "
        f"to {args.out}" + (f" ({written} files)" if written > 1 else "")
    )
    if labels.boxes.masks is not None and not target.writes_masks:
        print(_masks_as_boxes(target.name))
    if target.needs is not None:
        print(f"note: {target.needs(labels, args.image_root)}", file=sys.stderr)
    return 0


def _masks_as_boxes(target: str) -> str:
    """The summary's line for a box target given a report scored on masks: what it lost, and
    where the masks go."""
    mask_targets = ", ".join(f"--to {name}" for name, t in EXPORT_TARGETS.items() if t.writes_masks)
    return (
        f"the run was scored on masks: {target} takes boxes, so each pre-label was written as its "
        f"mask's box (to keep the masks: {mask_targets})"
    )


def _write_file(out: str, option: str, content: bytes) -> None:
    """One file the user named (a page, a costs file, rows), through the same safe path."""
    _write_files(out, iter([(PurePath(out), content)]), option)


def _write_files(
    out: str, files: Iterator[tuple[PurePath, bytes | Iterator[bytes]]], option: str = "--out"
) -> int:
    """Each exported file through the storage layer, in the folder `--out` names a file of (a
    local folder, an s3:// prefix; a folder export's files under `--out`, a companion file such as
    Label Studio's config beside it): every file whole or not at all, never over what is not a
    regular file (`LocalStore.put`). How many were written."""
    store, _ = open_target(out, option)
    written = 0
    for path, content in files:
        key = PurePath(path).relative_to(PurePath(out).parent).as_posix()
        store.put(key, content, mimetypes.guess_type(key)[0] or "application/octet-stream")
        written += 1
    return written


def _gc(args: argparse.Namespace) -> int:
    from handler.report.publish import collect_garbage, parse_duration

    store = chosen_store(args)
    deleted = collect_garbage(store, parse_duration(args.older_than))
    print(f"deleted {len(deleted)} staging objects from {store.uri}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from handler.comparison import compare_runs
    from handler.report.findings import compare_summary
    from handler.report.ledger import format_of_file
    from handler.report.ledger.transition_rows import TRANSITION_COLUMNS, transition_table
    from handler.report.page.compare_page import render_compare_html

    configure_logging(args, default=logging.WARNING)
    rows_format = format_of_file(args.transitions, "--transitions") if args.transitions else None
    for path, option in ((args.html, "--html"), (args.transitions, "--transitions")):
        if path:  # a file no write may replace (a device, a link, a folder) is refused before the runs
            store, key = open_target(path, option)
            store.check_replaceable(key)
    store = chosen_store(args)
    found, moved = compare_runs(
        _node_inputs(args, args.gt, args.pred_a),
        args.pred_b,
        costs=time_costs(args),
        store=store,
        execution=execution_options(args),
    )
    if args.html:
        _write_file(args.html, "--html", render_compare_html(found).encode("utf-8"))
    if rows_format is not None:
        written = io.BytesIO()
        rows_format.write([transition_table(moved)], TRANSITION_COLUMNS, written)
        _write_file(args.transitions, "--transitions", written.getvalue())
    print(found.to_json().decode() if args.json else compare_summary(found))
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    from handler.calibrate import calibrate, calibration_lines

    configure_logging(args, default=logging.WARNING)
    costs = calibrate(args.logs, shape=args.shape)
    _write_file(args.out, "--out", orjson.dumps(costs.to_document(), option=orjson.OPT_INDENT_2) + b"\n")
    print("\n".join([*calibration_lines(costs), f"wrote {args.out} (use it: --time-costs {args.out})"]))
    return 0


def main(argv: list[str] | None = None) -> int:
    def command() -> int:
        args = parse_command_line(sys.argv[1:] if argv is None else argv)
        code: int = args.command(args)
        return code

    return run_as_command(command)


def prelabel_eval() -> NoReturn:
    """The `prelabel-eval` command (and `python -m handler.cli`): `main`, then the process ends
    without the interpreter's teardown, as the node's does (`handler.entry.leave`)."""
    leave(main())


if __name__ == "__main__":
    prelabel_eval()
