"""Each rule in one place, as a test: after hotcoco's `tests/architecture.rs`.

Someone checking a number should find one place that says how it is computed. These checks are
deliberately crude: each rule is a shape of code (an expression, a call, a literal), matched on
the syntax tree of every module of `handler/` (docstrings and comments are no code: prose that
mentions a rule is not a copy of it). A determined author can evade them; they catch the accidental
second copy that review misses, and the message names the one home to call instead. Each rule is an
allow-list of its homes; a genuinely different rule gets its own home in `homes`, with a comment; do
not widen a home or loosen a shape to let a copy through.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from handler.datasets import format_names
from handler.engine.ledger import read_ledger_chunk

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Source:
    path: str  # relative to the project, e.g. handler/engine/score.py
    tree: ast.Module
    lines: tuple[str, ...]


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes of a module, its classes and functions."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


@cache
def sources() -> tuple[Source, ...]:
    found = []
    for path in sorted((ROOT / "handler").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        found.append(Source(path.relative_to(ROOT).as_posix(), ast.parse(text), tuple(text.splitlines())))
    # A conformance test that scans nothing must fail, never pass.
    assert len(found) > 20, f"found only {len(found)} source files under handler/"
    return tuple(found)


def code_nodes(source: Source) -> list[ast.expr | ast.stmt]:
    """Every expression and statement of a module but its docstrings."""
    skip = _docstrings(source.tree)
    return [n for n in ast.walk(source.tree) if isinstance(n, ast.expr | ast.stmt) and id(n) not in skip]


@cache
def _code(path: str) -> list[ast.expr | ast.stmt]:
    return code_nodes(next(source for source in sources() if source.path == path))


Shape = Callable[[ast.AST], bool]


def scan(shape: Shape, skip: tuple[str, ...] = ()) -> list[str]:
    """`path:line  code` of every node of that shape, outside the files in `skip`."""
    return [
        f"{source.path}:{node.lineno}  {source.lines[node.lineno - 1].strip()}"
        for source in sources()
        if source.path not in skip
        for node in _code(source.path)
        if shape(node)
    ]


# --- the shapes rules are made of ---


def names_in(node: ast.AST) -> set[str]:
    """Every identifier an expression reads: names, attributes (`a.b.c`: b and c too)."""
    found: set[str] = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name):
            found.add(inner.id)
        elif isinstance(inner, ast.Attribute):
            found.add(inner.attr)
    return found


def mentions(node: ast.AST, pattern: str) -> bool:
    return any(re.search(pattern, name, re.IGNORECASE) for name in names_in(node))


def called(*names: str) -> Shape:
    """A call of a function or method of one of these names."""

    def shape(node: ast.AST) -> bool:
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        return (func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)) in names

    return shape


def text(*patterns: str) -> Shape:
    """A string literal that is one of these (full matches)."""
    return lambda node: (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and any(re.fullmatch(pattern, node.value) for pattern in patterns)
    )


def assigned(*names: str) -> Shape:
    """An assignment (plain or annotated) to a module-level or local name of these."""

    def shape(node: ast.AST) -> bool:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        return any(isinstance(target, ast.Name) and target.id in names for target in targets)

    return shape


def any_of(*shapes: Shape) -> Shape:
    return lambda node: any(shape(node) for shape in shapes)


def binop(node: ast.AST, op: type[ast.operator]) -> ast.BinOp | None:
    return node if isinstance(node, ast.BinOp) and isinstance(node.op, op) else None


def is_number(node: ast.AST, value: float) -> bool:
    return isinstance(node, ast.Constant) and node.value == value and not isinstance(node.value, bool)


def iou_shape(node: ast.AST) -> bool:
    """`x / (a + b - x)`: an IoU denominator with the intersection taken back out."""
    division = binop(node, ast.Div)
    below = division and binop(division.right, ast.Sub)
    return bool(below and binop(below.left, ast.Add) and ast.dump(below.right) == ast.dump(division.left))


def named_union(node: ast.AST) -> bool:
    """A variable named `union` or `intersection` (set methods of that name are not it)."""
    return isinstance(node, ast.Name) and node.id in ("union", "intersection")


def keep_rule(node: ast.AST) -> bool:
    """`confidence >= threshold` or `confidence < threshold`, either way round."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
        return False
    left, right, op = node.left, node.comparators[0], node.ops[0]
    pairs = {ast.GtE: (left, right), ast.Lt: (left, right), ast.LtE: (right, left), ast.Gt: (right, left)}
    sides = pairs.get(type(op))
    return sides is not None and mentions(sides[0], "confidence|score") and mentions(sides[1], "threshold")


def twice_correct(node: ast.AST) -> bool:
    """`2 * correct` (the score's numerator 2C + S + X), or a Fraction built on `2 * ...`."""
    product = binop(node, ast.Mult)
    if product and (is_number(product.left, 2) or is_number(product.right, 2)):
        other = product.right if is_number(product.left, 2) else product.left
        return mentions(other, "^correct$")
    return called("Fraction")(node) and any(binop(a, ast.Mult) and is_number(a.left, 2) for a in node.args)  # type: ignore[attr-defined]


def grade_bound(node: ast.AST) -> bool:
    """`... >= 2 * n * total`: a grade bound compared by hand."""
    return (
        isinstance(node, ast.Compare)
        and isinstance(node.ops[0], ast.GtE)
        and bool(binop(node.comparators[0], ast.Mult))
        and "total" in names_in(node.comparators[0])
        and any(is_number(inner, 2) for inner in ast.walk(node.comparators[0]))
    )


def positional_columns(node: ast.AST) -> bool:
    """`c, s, x = ...` / `correct, shifted, confused = ...`, or `counts[:3]`: score columns by position."""
    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple):
        names = [e.id for e in node.targets[0].elts if isinstance(e, ast.Name)]
        return names[:3] in (["c", "s", "x"], ["correct", "shifted", "confused"])
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Slice)
        and node.slice.lower is None
        and node.slice.upper is not None
        and is_number(node.slice.upper, 3)
        and mentions(node.value, "^(counts?|whole)$")
    )


def minus_false_positives(node: ast.AST) -> bool:
    difference = binop(node, ast.Sub)
    return bool(difference and "FALSE_POSITIVE" in names_in(difference.right))


def key_times_outcomes(node: ast.AST) -> bool:
    """`key * N_OUTCOMES + outcome`: outcome counts by key, one bincount."""
    total = binop(node, ast.Add)
    product = total and binop(total.left, ast.Mult)
    return bool(product and "N_OUTCOMES" in names_in(product.right))


def column(node: ast.AST, index: int) -> bool:
    """`xyxy[:, index]`."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple)):
        return False
    elts = node.slice.elts
    return len(elts) == 2 and isinstance(elts[0], ast.Slice) and is_number(elts[1], index)


def box_width(node: ast.AST) -> bool:
    difference = binop(node, ast.Sub)
    return bool(difference and column(difference.left, 2) and column(difference.right, 0))


def s3_prefix_test(node: ast.AST) -> bool:
    """`x.startswith("s3://")`: a scheme chosen by hand."""
    return called("startswith")(node) and any(
        isinstance(a, ast.Constant)
        and isinstance(a.value, str | bytes)
        and a.value[:5] in ("s3://", b"s3://")
        for a in node.args  # type: ignore[attr-defined]
    )


def actions_tuple(node: ast.AST) -> bool:
    """`("accept", "nudge", ...)`: the outcome actions spelled by position."""
    return isinstance(node, ast.Tuple | ast.List) and [
        e.value for e in node.elts[:2] if isinstance(e, ast.Constant)
    ] == ["accept", "nudge"]


def threshold_default(node: ast.AST) -> bool:
    """A node.json default typed in code: `default=0.5`, `iou_min = 0.5`, the text "0.5"."""
    if isinstance(node, ast.Call):
        return any(
            k.arg == "default" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, float)
            for k in node.keywords
        )
    if assigned("iou_min", "iou_perfect", "confidence_threshold")(node):
        value = node.value  # type: ignore[attr-defined]
        return isinstance(value, ast.Constant) and isinstance(value.value, int | float)
    return text(r"0\.\d+")(node)


@dataclass(frozen=True)
class Rule:
    name: str
    shape: Shape  # what a copy of the rule looks like in code
    homes: tuple[str, ...]  # the files allowed to spell it; empty: no file spells it this way
    instead: str  # what to call

    def __str__(self) -> str:
        return self.name


GRADE_NAMES = ("Production-grade", "Strong assist", "Partial assist", "Minimal assist")

RULES = (
    Rule(
        "IoU formula",
        any_of(iou_shape, named_union),
        ("handler/engine/iou.py",),
        "handler.engine.iou.iou_of_overlap (with overlap and box_area)",
    ),
    Rule(
        "greedy matcher",
        any_of(
            lambda node: isinstance(node, ast.FunctionDef) and node.name.startswith("greedy_"),
            lambda node: isinstance(node, ast.Name) and node.id in ("best_for_pred", "best_for_gt"),
            lambda node: (
                called("argsort")(node)
                and any(isinstance(a, ast.UnaryOp) and isinstance(a.op, ast.USub) for a in node.args)
            ),  # type: ignore[attr-defined]
        ),
        ("handler/engine/matching.py", "handler/kernels/greedy_match.py"),
        "handler.engine.matching.greedy_match on candidate_pairs (or evaluation.match_kept)",
    ),
    Rule(
        "score fraction 2C + S + X",
        twice_correct,
        ("handler/engine/score.py",),
        "handler.engine.score (score_fraction, assistance_score, assistance_scores) or Tally.score_fraction",
    ),
    Rule(
        "keep rule `confidence >= threshold`",
        keep_rule,
        ("handler/engine/evaluation.py",),
        "handler.engine.evaluation.keep_mask(confidence, threshold)",
    ),
    Rule(
        "grade bands",
        text(*GRADE_NAMES),
        # fields.py spells them once more as the schema's Literal enum; test_schema_drift checks
        # that Literal against GRADES, so the two cannot disagree.
        ("handler/engine/score.py", "handler/sections/fields.py"),
        "handler.engine.score.GRADES / grade_indices(), or OutcomeCounts.grade",
    ),
    Rule(
        "node.json defaults and options",
        threshold_default,
        (),
        "handler.inputs: DEFAULT_THRESHOLDS, node_defaults(), select_options(key), input_spec(key)",
    ),
    Rule(
        "outcome actions as a positional tuple",
        actions_tuple,
        (),
        "the Outcome attributes: outcome.action, .label, .short_label, .cost_field, .key",
    ),
    Rule(
        'storage scheme choice `startswith("s3://")`',
        s3_prefix_test,
        (),
        "handler.storage.registry (open_store / open_source / resolve_dataset, S3_SCHEME)",
    ),
    Rule(
        "outcome labels on the page",
        text("Class-confused", "False positive", "False negative", "Confused", "FP", "FN"),
        ("handler/engine/outcomes.py",),
        "Outcome.label / Outcome.short_label (report/page/html.py: CARD_LABELS, SHORT_LABELS)",
    ),
    # Scoring a row of outcome counts is one type, `OutcomeCounts` (engine/counts.py).
    Rule(
        "scoring rows of outcome counts",
        called("weighted_halves", "assistance_scores", "grade_indices"),
        ("handler/engine/score.py", "handler/engine/counts.py"),
        "handler.engine.counts.OutcomeCounts(rows): .scores/.score, .grade_indices/.grade",
    ),
    Rule(
        "score columns picked by position",
        positional_columns,
        ("handler/engine/counts.py",),
        "handler.engine.counts.OutcomeCounts(rows)",
    ),
    Rule(
        "GT boxes = total - false positives",
        minus_false_positives,
        ("handler/engine/counts.py",),
        "handler.engine.counts.OutcomeCounts(rows).gt_boxes",
    ),
    Rule(
        "grade bound d·(2C + S + X) >= 2·n·total",
        grade_bound,
        ("handler/engine/score.py",),
        "handler.engine.score.grade_indices (through OutcomeCounts) or score.grade",
    ),
    Rule(
        "labeler seconds `counts @ costs.per_outcome()`",
        called("per_outcome"),
        ("handler/engine/counts.py",),
        "handler.engine.counts.OutcomeCounts(rows).labeler_seconds(costs)",
    ),
    Rule(
        "N_OUTCOMES",
        assigned("N_OUTCOMES"),
        ("handler/engine/outcomes.py",),
        "handler.engine.outcomes.N_OUTCOMES",
    ),
    Rule(
        "outcome counts by key (one bincount of key · N_OUTCOMES + outcome)",
        key_times_outcomes,
        ("handler/engine/breakdowns.py",),
        "handler.engine.breakdowns.count_outcomes / outcome_counts",
    ),
    Rule(
        "box area",
        box_width,
        ("handler/boxes.py",),
        "handler.boxes.box_area (or BoxTable.area)",
    ),
    Rule(
        "what a format is and does, by its name",
        text(*(re.escape(name) for name in format_names())),
        tuple(sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "handler" / "datasets").glob("*.py"))),
        "a field of the format's record (handler.datasets.format.Format) or a function of "
        "handler.datasets.reading (names_from, sizes_from, shard_format, shards_readable)",
    ),
)


@pytest.mark.parametrize("rule", RULES, ids=str)
def test_each_rule_is_spelled_in_its_home_only(rule: Rule) -> None:
    copies = scan(rule.shape, skip=rule.homes)
    where = ", ".join(rule.homes) or "one place, not spelled like this in code"
    assert not copies, (
        f"the {rule.name} lives in {where}. Found what looks like another copy at:\n  "
        + "\n  ".join(copies)
        + f"\n\nCall {rule.instead} instead."
    )


@pytest.mark.parametrize("rule", [r for r in RULES if r.homes], ids=str)
def test_each_home_still_spells_its_rule(rule: Rule) -> None:
    """A shape that matches nothing, not even in its home, guards nothing: keep it current."""
    assert scan(rule.shape, skip=tuple(s.path for s in sources() if s.path not in rule.homes)), (
        f"{rule.name}: its shape no longer matches {', '.join(rule.homes)}; update it with the code"
    )


COPIES = {
    "IoU formula": "iou = inter / (area_a + area_b - inter)",
    "keep rule `confidence >= threshold`": "kept = pred.confidence >= inputs.confidence_threshold",
    "score fraction 2C + S + X": "numerator = 2 * counts.correct + counts.shifted",
    "grade bands": 'label = "Strong assist"',
    "box area": "width = xyxy[:, 2] - xyxy[:, 0]",
    "scoring rows of outcome counts": "scores = assistance_scores(c, s, x, total)",
    "GT boxes = total - false positives": "gt = row.sum() - row[Outcome.FALSE_POSITIVE]",
    'storage scheme choice `startswith("s3://")`': 'remote = uri.startswith("s3://")',
}
NOT_COPIES = {
    "IoU formula": "chosen = frozenset().union(*ids)",
    "keep rule `confidence >= threshold`": "guarded = boxes >= min_class_boxes_threshold",
    "grade bands": '"""The Strong assist band."""',
}


@pytest.mark.parametrize("name", sorted(COPIES))
def test_a_copy_is_caught_and_a_look_alike_is_not(name: str) -> None:
    """Each shape finds the copy it is for, and not code that merely looks like it."""
    rule = next(rule for rule in RULES if rule.name == name)
    source = Source("handler/x.py", ast.parse(COPIES[name]), (COPIES[name],))
    assert any(rule.shape(node) for node in code_nodes(source))
    if name in NOT_COPIES:
        other = Source("handler/x.py", ast.parse(NOT_COPIES[name]), (NOT_COPIES[name],))
        assert not any(
            rule.shape(node) for node in code_nodes(other) if isinstance(node, ast.expr | ast.stmt)
        )


# --- Layers: which part of handler/ may import which (a package, a package of report/, a module) ---

# The real import order, from the ground up: a part imports only parts of the tiers below its own,
# never one of its own tier or above. The data flows inputs → datasets → engine → execution →
# features → report → storage → outputs; the imports point at what a part builds on, which is
# another order: the datasets are read from a store, a shard's worker needs the engine and a
# storage sink but nothing of the report, the features build on what every section is made of, and
# the report's registries assemble the features. A new part (a package, a package of report/, a
# top-level module) goes in the tier above everything it imports.
TIERS: tuple[tuple[str, ...], ...] = (
    # The kernels compiled from C (the loops over columns numpy cannot vectorise): the box model's
    # selections gather their masks' runs with them.
    ("kernels",),
    # Plain types, the error classes, packaged files, a map over forked local processes, the node's
    # outputs line, what the entry points set before numpy is imported.
    ("boxes", "errors", "forked", "resources", "outputs", "entry"),
    # byte objects by URI; the matching, its analyses and what is computed from them (pure numpy)
    ("storage", "engine"),
    ("datasets",),  # every format read from a store into BoxTables, and paired
    # the rows read read again: the options' readings, the search's map, candidates and verdict
    ("readings",),
    ("inputs", "images"),  # node.json options name formats and thresholds; a dataset's images, read
    ("execution",),  # shards of whole assets mapped over an executor (the analyses given), merged exactly
    # What every feature is built on: a section's fields, the run's facts, the registration mark,
    # the words, the figures' geometry, what a finisher plugs into.
    ("sections",),
    # One folder per shown feature (its partial, section, finisher, fragment): every folder is this
    # one part, so a feature may read another's model, but none imports anything above the features.
    ("features",),
    # the registry of the features (the typed findings); JSON text from columns; a report's life in
    # the store
    ("report.findings", "report.json_lines", "report.publish"),
    ("report.page", "report.exports"),  # drawn from the findings; files for other tools (finishers)
    ("report.finishers", "report.ledger"),  # the registry of the finishers; the ledger read as the user wants
    ("report",),  # the report package's face names its jobs and imports none of them
    # the one way in: process what was given into the merged state, compute the result from it
    ("front_door",),
    # the entry points, downward among themselves too; what both command lines share
    ("pipeline", "comparison", "calibrate", "command_line"),
    ("metric", "progress"),
    ("mmeval", "cli", "__main__"),
    ("__init__",),  # the public API
    ("alias",),  # the same API as `prelabel_eval`, which no `handler.py` in the working folder shadows
)
TIER_OF = {part: level for level, parts in enumerate(TIERS) for part in parts}


def _part_of(dotted: str) -> str:
    """handler.engine.state -> engine; handler.report.page.html -> report.page; handler.cli -> cli;
    handler.features.per_class.section -> features (every feature folder is that one part)."""
    inner = dotted.split(".")[1:]
    return ".".join(inner[:2]) if inner[0] == "report" and len(inner) > 1 else inner[0]


def _part(path: str) -> str:
    """handler/engine/state.py -> engine; handler/report/page/html.py -> report.page; handler/__init__.py
    -> __init__ (the public API)."""
    inner = path.removesuffix(".py").removesuffix("/__init__").split("/")
    return _part_of(".".join(inner)) if len(inner) > 1 else "__init__"


def _imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every import of handler code, type-only and function-level ones included."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from handler.sections import charts` imports the module handler.sections.charts.
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            modules = [name for name in names if name in _module_names()]
            found += [(node.lineno, module) for module in modules or [node.module]]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return [(line, module) for line, module in found if module.startswith("handler.")]


@cache
def _module_names() -> set[str]:
    return {_module(source.path) for source in sources()}


@cache
def _trees() -> dict[str, ast.Module]:
    return {source.path: ast.parse((ROOT / source.path).read_text(encoding="utf-8")) for source in sources()}


def against_the_layers(trees: dict[str, ast.Module]) -> list[str]:
    """`path:line imports module (...)` for every import of a part of the same tier or above."""
    return [
        f"{path}:{line} imports {module}: {_part(path)} (tier {TIER_OF[_part(path)]}) may import only "
        f"parts of the tiers below it, not {_part_of(module)} (tier {TIER_OF[_part_of(module)]})"
        for path, tree in trees.items()
        for line, module in _imported_modules(tree)
        if _part_of(module) != _part(path) and TIER_OF[_part_of(module)] >= TIER_OF[_part(path)]
    ]


def test_each_part_imports_only_the_parts_below_it() -> None:
    parts = {_part(path) for path in _trees()}
    assert parts <= set(TIER_OF), f"parts of handler/ missing from TIERS: {sorted(parts - set(TIER_OF))}"
    assert set(TIER_OF) <= parts, f"parts in TIERS that no longer exist: {sorted(set(TIER_OF) - parts)}"
    wrong = against_the_layers(_trees())
    assert not wrong, "imports against the layers:\n  " + "\n  ".join(wrong)


def test_the_layer_check_reads_imports_wherever_they_are() -> None:
    """An import inside a function or under TYPE_CHECKING counts as much as one at the top."""
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from handler.report.findings import Findings\n"
        "def later():\n    import handler.pipeline\n"
    )
    found = against_the_layers({"handler/execution/run.py": tree})
    assert [line.split(" imports ")[1].split(":")[0] for line in found] == [
        "handler.report.findings",
        "handler.pipeline",
    ]


# --- One front door: no way in above it wires a step of the flow itself ---

# The steps a way in would otherwise wire by hand: read and plan both sides, evaluate them, search
# the other readings, build what the finishers and sections read, build the findings.
# `handler/front_door.py` is the one caller among the entry points (its `FrontDoor`).
FLOW_STEPS = frozenset(
    {
        "read_and_plan",
        "plan_sides",
        "read_both",
        "read_sides",
        "evaluate_plan",
        "evaluate",
        "best_reading",
        "Merged",
        "RunFacts",
        "build_findings",
        "page_values",
    }
)


def flow_steps_above_the_door(trees: dict[str, ast.Module]) -> list[str]:
    """`path:line name` of every step of the flow an entry point above the front door imports or
    reaches as an attribute."""
    above = {path: tree for path, tree in trees.items() if TIER_OF[_part(path)] > TIER_OF["front_door"]}
    return [
        f"{path}:{node.lineno} {name}"
        for path, tree in above.items()
        for node in ast.walk(tree)
        for name in (
            [alias.name for alias in node.names]
            if isinstance(node, ast.ImportFrom)
            else [node.attr]
            if isinstance(node, ast.Attribute)
            else []
        )
        if name in FLOW_STEPS
    ]


def test_the_entry_points_go_through_the_front_door() -> None:
    """The node, the CLI, compare and both metrics call no step of the flow but by `FrontDoor`
    (tests/node/test_front_door.py checks that each of them does go through it)."""
    wiring = flow_steps_above_the_door(_trees())
    assert not wiring, "entry points wiring the flow themselves (call FrontDoor instead):\n  " + "\n  ".join(
        wiring
    )


def test_the_front_door_check_sees_an_entry_point_wiring_the_flow() -> None:
    tree = ast.parse(
        "from handler.execution import evaluate_plan\n"
        "def run(plan, execution):\n    return execution.read_and_plan(plan)\n"
    )
    found = flow_steps_above_the_door({"handler/comparison.py": tree, "handler/front_door.py": tree})
    assert found == ["handler/comparison.py:1 evaluate_plan", "handler/comparison.py:3 read_and_plan"]


WORKER = """
import sys
from handler.engine import Thresholds
from handler.features import ANALYSES
from handler.execution.run import ShardJob, run_shard
from handler.execution.shards import FileShard
from handler.storage import ObjectSink

folder = sys.argv[1]
gt, pred = f"{folder}/gt/0000.jsonl", f"{folder}/pred/0000.jsonl"
shard = FileShard(0, gt, pred, Thresholds(0.5, 0.9, 0), 20, ANALYSES)
job = ShardJob(
    shard,
    ObjectSink(f"{folder}/store", "reports/r/ledger/00000.npz", "application/octet-stream"),
)
output = run_shard(job)
assert output.state.tally.total == 1 and output.written is not None, output
print(" ".join(sorted(name for name in sys.modules if name.split(".")[0] in ("pydantic", "jinja2"))))
print(" ".join(sorted(name for name in sys.modules if name.startswith("handler.report"))))
"""


def test_a_shard_worker_loads_neither_pydantic_nor_jinja2(tmp_path: Path) -> None:
    """What a worker imports to run a shard (what unpickling `run_shard` and its job loads, then
    the shard itself: read, evaluate, write its ledger chunk): nothing of the report, whose
    pydantic models and jinja2 templates stay on the driver."""
    box = {"label": "cat", "x_min": 0, "y_min": 0, "x_max": 10, "y_max": 10}
    for side, extra in (("gt", {}), ("pred", {"confidence": 0.9})):
        (tmp_path / side).mkdir()
        line = {"asset_id": "a", "annotations": [{**box, **extra}]}
        (tmp_path / side / "0000.jsonl").write_text(json.dumps(line) + "\n")
    done = subprocess.run(
        [sys.executable, "-c", WORKER, str(tmp_path)], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    libraries, report = done.stdout.split("\n")[:2]
    assert (libraries, report) == ("", ""), f"a shard's worker loaded: {libraries} {report}"
    assert len(read_ledger_chunk((tmp_path / "store/reports/r/ledger/00000.npz").read_bytes())) == 1


# --- Every public engine function or class has a caller in handler/, found through its import ---


def _module(path: str) -> str:
    """handler/engine/state.py -> handler.engine.state; handler/engine/__init__.py -> handler.engine."""
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


@cache
def _modules() -> dict[str, ast.Module]:
    return {_module(path): tree for path, tree in _trees().items()}


@cache
def _import_table(module: str) -> dict[str, tuple[str, str | None]]:
    """Each name a module imports from handler/: local name -> (module, name), name None for a module."""
    table: dict[str, tuple[str, str | None]] = {}
    for node in ast.walk(_modules()[module]):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                whole = f"{node.module}.{alias.name}"
                table[alias.asname or alias.name] = (
                    (whole, None) if whole in _modules() else (node.module, alias.name)
                )
        elif isinstance(node, ast.Import):
            table.update({alias.asname: (alias.name, None) for alias in node.names if alias.asname})
    return table


def _defines(module: str, name: str) -> bool:
    for node in _modules()[module].body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == name:
            return True
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if any(isinstance(target, ast.Name) and target.id == name for target in targets):
            return True
    return False


def _resolve(module: str, name: str) -> tuple[str, str]:
    """Where `name`, as imported from `module`, is defined: re-exports are followed."""
    while module in _modules() and not _defines(module, name):
        found = _import_table(module).get(name)
        if found is None or found[1] is None:
            break
        module, name = found[0], found[1]
    return module, name


@cache
def _used_from_elsewhere() -> set[tuple[str, str]]:
    """(defining module, name) of everything some other module imports and then refers to."""
    used = set()
    for module, tree in _modules().items():
        table = _import_table(module)
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and table.get(node.id, ("", None))[1] is not None:
                source, name = table[node.id]
                used.add((_resolve(source, name or ""), module))
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                source, name = table.get(node.value.id, ("", ""))
                if name is None:  # an imported module's attribute: `breakdowns.counts_by_class`
                    used.add((_resolve(source, node.attr), module))
    return {target for target, user in used if target[0] != user}


def _used_in_its_module(module: str, definition: ast.FunctionDef | ast.ClassDef) -> bool:
    """Referred to in its own module outside its own body (a helper of that module)."""
    inside = {id(node) for node in ast.walk(definition)}
    return any(
        isinstance(node, ast.Name) and node.id == definition.name and id(node) not in inside
        for node in ast.walk(_modules()[module])
    )


def test_engine_functions_have_a_caller_in_the_package() -> None:
    """Test-only and bench-only helpers live in tests/helpers/ and bench/, not in the engine.

    A use is resolved through the imports: a function of the same name elsewhere (a section's
    builder named like an engine function) is not a caller, and a re-export is not a use.
    """
    elsewhere = _used_from_elsewhere()
    unused = [
        f"{module}.{node.name}"
        for module, tree in _modules().items()
        if module.startswith("handler.engine")
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("_")
        if (module, node.name) not in elsewhere and not _used_in_its_module(module, node)
    ]
    assert not unused, (
        "public engine functions with no caller in handler/ (move them to tests/helpers/ or bench/):\n  "
        + "\n  ".join(unused)
    )


def test_the_caller_check_resolves_imports_not_names() -> None:
    """`confidence_sweep` is both a findings section's builder and, once, an engine function only
    tests called: the section's name must not count as a call of the engine's."""
    elsewhere = _used_from_elsewhere()
    assert ("handler.engine.sweep", "class_sweep") in elsewhere  # imported by the sweep analysis
    assert ("handler.engine.breakdowns", "counts_by_class") in elsewhere  # `from ... import breakdowns`
    assert ("handler.engine.evaluation", "evaluate") in elsewhere  # through engine/__init__'s re-export
    assert not any(
        name == "confidence_sweep" and module.startswith("handler.engine") for module, name in elsewhere
    )


# --- A feature shown on the page is one folder ---

FEATURE_FILES = {"partial.py", "section.py", "finisher.py", "fragment.html.j2"}


def test_a_feature_is_one_folder_of_its_partial_section_finisher_and_fragment() -> None:
    """Each folder of handler/features/ holds only a feature's four files (a section at least), and
    the page's registry (the `Findings` fields) shows every folder with a fragment, each once."""
    from handler.report.findings.model import Findings
    from handler.sections.shown import features

    folders = {p.name: p for p in (ROOT / "handler/features").iterdir() if p.is_dir() and p.name[0] != "_"}
    for name, folder in folders.items():
        files = {p.name for p in folder.iterdir() if p.name != "__pycache__"}
        assert "section.py" in files and files <= FEATURE_FILES, f"handler/features/{name}: {sorted(files)}"
    shown = [spec.feature for spec in features(Findings)]
    with_fragment = {name for name, folder in folders.items() if (folder / "fragment.html.j2").is_file()}
    assert len(shown) == len(set(shown)) and set(shown) == with_fragment


def test_every_feature_partial_loads_without_pydantic_or_jinja2() -> None:
    """The workers import every feature's partial (handler.features discovers them): none may pull in
    the report's libraries."""
    code = (
        "import sys, handler.features as f\n"
        "assert f.feature_partials()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'jinja2')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# --- Records are msgspec Structs, never dataclasses ---


def dataclass_uses(trees: dict[str, ast.Module]) -> list[str]:
    """`path:line` of every import of the `dataclasses` module (its decorator, `make_dataclass`,
    `field`, `replace`...), at the top or inside a function."""
    return [
        f"{path}:{node.lineno}"
        for path, tree in trees.items()
        for node in ast.walk(tree)
        if (isinstance(node, ast.ImportFrom) and node.module == "dataclasses")
        or (isinstance(node, ast.Import) and any(alias.name == "dataclasses" for alias in node.names))
    ]


def test_the_package_defines_its_records_as_msgspec_structs() -> None:
    """Every start of the node and of `prelabel-eval` defines the package's records: a dataclass is
    built by generating and exec'ing the source of its methods, a `msgspec.Struct` is defined in C
    at a small fraction of that cost (docs/decisions.md), so a record is `class R(msgspec.Struct,
    frozen=True)` and `msgspec.structs` replaces `dataclasses.replace`, `fields` and `asdict`."""
    found = dataclass_uses(_trees())
    assert not found, "dataclasses in handler/ (make them msgspec.Structs):\n  " + "\n  ".join(found)


# Three ways to a dataclass (lines 2, 3 and 7) and a Struct, which is no dataclass.
RECORDS_SAMPLE = """import msgspec
from dataclasses import dataclass
import dataclasses as dc
class Kept(msgspec.Struct, frozen=True):
    x: int
def made():
    from dataclasses import make_dataclass
"""


def test_the_record_check_sees_every_way_to_a_dataclass() -> None:
    found = dataclass_uses({"handler/boxes.py": ast.parse(RECORDS_SAMPLE)})
    assert found == [f"handler/boxes.py:{line}" for line in (2, 3, 7)]
