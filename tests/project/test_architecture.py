"""Each rule in one place (issue 9), as a test: after hotcoco's `tests/architecture.rs`.

Someone checking a number should find one place that says how it is computed. These checks
are deliberately crude, a grep over the code lines of `handler/` (comments and docstrings
dropped: prose that mentions a rule is not a copy of it). A determined author can evade
them; they catch the accidental second copy that review misses, and the message names the
one home to call instead. A genuinely different rule gets its own home in `homes`, with a
comment; do not weaken a pattern to let a copy through.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from handler.datasets import format_names

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Source:
    path: str  # relative to the project, e.g. handler/engine/score.py
    lines: tuple[tuple[int, str], ...]  # (line number, code) with comments and docstrings dropped


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            value = first.value if isinstance(first, ast.Expr) else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def _read(path: Path) -> Source:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            row, col = token.start
            lines[row - 1] = lines[row - 1][:col]
    skip = _docstring_lines(ast.parse(text))
    code = tuple((n, line) for n, line in enumerate(lines, 1) if n not in skip and line.strip())
    return Source(path.relative_to(ROOT).as_posix(), code)


@cache
def sources() -> tuple[Source, ...]:
    found = tuple(_read(path) for path in sorted((ROOT / "handler").rglob("*.py")))
    # A conformance test that scans nothing must fail, never pass.
    assert len(found) > 20, f"found only {len(found)} source files under handler/"
    return found


def scan(pattern: str, skip: tuple[str, ...] = ()) -> list[str]:
    """`path:line  code` of every code line matching `pattern`, outside the files in `skip`."""
    regex = re.compile(pattern)
    return [
        f"{source.path}:{n}  {line.strip()}"
        for source in sources()
        if source.path not in skip
        for n, line in source.lines
        if regex.search(line)
    ]


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: str  # what a copy of the rule looks like in code
    homes: tuple[str, ...]  # the files allowed to spell it; empty: no file spells it this way
    instead: str  # what to call

    def __str__(self) -> str:
        return self.name


RULES = (
    Rule(
        "IoU formula",
        r"\bunion\b|\bintersection\b",
        ("handler/engine/iou.py",),
        "handler.engine.iou.iou_of_overlap (with overlap and box_area)",
    ),
    Rule(
        "greedy matcher",
        r"best_for_(pred|gt)|def greedy_|np\.argsort\(-",
        ("handler/engine/matching.py",),
        "handler.engine.matching.greedy_match on candidate_pairs (or evaluation.match_kept)",
    ),
    Rule(
        "score fraction 2C + S + X",
        r"\b2\s*\*\s*[\w.\[\]:, ]*\b(correct|CORRECT)\b|Fraction\([^)]*2\s*\*",
        ("handler/engine/score.py",),
        "handler.engine.score (score_fraction, assistance_score, assistance_scores) or Tally.score_fraction",
    ),
    Rule(
        "keep rule `confidence >= threshold`",
        r"confidence\s*(>=|<)\s*[\w.]*threshold\b|(>=|<)\s*[\w.]*threshold\b",
        ("handler/engine/evaluation.py",),
        "handler.engine.evaluation.keep_mask(confidence, threshold)",
    ),
    Rule(
        "grade bands",
        r"Production-grade|Strong assist|Partial assist|Minimal assist",
        # fields.py spells them once more as the schema's Literal enum; test_schema_drift checks
        # that Literal against GRADES, so the two cannot disagree.
        ("handler/engine/score.py", "handler/report/fields.py"),
        "handler.engine.score.GRADES / grade_indices(), or OutcomeCounts.grade",
    ),
    Rule(
        "node.json defaults and options",
        r"default\s*=\s*\"?\d*\.\d+|\b(iou_min|iou_perfect|confidence_threshold)\s*(:\s*float\s*)?=\s*\d|\"0\.\d+\"",
        (),
        "handler.inputs: DEFAULT_THRESHOLDS, node_defaults(), select_options(key), input_spec(key)",
    ),
    Rule(
        "outcome actions as a positional tuple",
        r"\"accept\",\s*\"nudge\"",
        (),
        "the Outcome attributes: outcome.action, .label, .short_label, .cost_field, .key",
    ),
    # Being unified in handler/storage/ by another engineer right now: the scheme choice.
    Rule(
        'storage scheme choice `startswith("s3://")`',
        r"startswith\(\s*b?[\"']s3://",
        (),
        "handler.storage.registry (open_store / open_source / resolve_dataset, S3_SCHEME)",
    ),
    Rule(
        "outcome labels on the page",
        r"\"(Class-confused|False positive|False negative|Confused|FP|FN)\"",
        ("handler/engine/outcomes.py",),
        "Outcome.label / Outcome.short_label (report/html.py: CARD_LABELS, SHORT_LABELS)",
    ),
    # Issue 16: scoring a row of outcome counts is one type, `OutcomeCounts` (engine/counts.py).
    Rule(
        "scoring rows of outcome counts",
        r"\b(weighted_halves|assistance_scores|grade_indices)\(",
        ("handler/engine/score.py", "handler/engine/counts.py"),
        "handler.engine.counts.OutcomeCounts(rows): .scores/.score, .grade_indices/.grade",
    ),
    Rule(
        "score columns picked by position",
        r"\bc,\s*s,\s*x\b|\bcorrect,\s*shifted,\s*confused\s*=|counts?\[:3\]|whole\[:3\]",
        ("handler/engine/counts.py",),
        "handler.engine.counts.OutcomeCounts(rows)",
    ),
    Rule(
        "GT boxes = total - false positives",
        r"-\s*[\w.\[\]:,( ]*FALSE_POSITIVE\b",
        ("handler/engine/counts.py",),
        "handler.engine.counts.OutcomeCounts(rows).gt_boxes",
    ),
    Rule(
        "grade bound d·(2C + S + X) >= 2·n·total",
        r">=\s*2\s*\*\s*\w+\s*\*\s*total",
        ("handler/engine/score.py",),
        "handler.engine.score.grade_indices (through OutcomeCounts) or score.grade",
    ),
    Rule(
        "labeler seconds `counts @ costs.per_outcome()`",
        r"\.per_outcome\(\)",
        ("handler/engine/counts.py",),
        "handler.engine.counts.OutcomeCounts(rows).labeler_seconds(costs)",
    ),
    Rule(
        "N_OUTCOMES",
        r"\bN_OUTCOMES\s*(:\s*[\w\[\]]+\s*)?=",
        ("handler/engine/outcomes.py",),
        "handler.engine.outcomes.N_OUTCOMES",
    ),
    Rule(
        "outcome counts by key (one bincount of key · N_OUTCOMES + outcome)",
        r"\*\s*N_OUTCOMES\s*\+",
        ("handler/engine/breakdowns.py",),
        "handler.engine.breakdowns.count_outcomes / outcome_counts",
    ),
    Rule(
        "box area",
        r"\[:,\s*2\]\s*-\s*[\w.]*\[:,\s*0\]",
        ("handler/boxes.py",),
        "handler.boxes.box_area (or BoxTable.area)",
    ),
    Rule(
        "what a format is and does, by its name",
        r"[\"'](" + "|".join(re.escape(name) for name in format_names()) + r")[\"']",
        tuple(sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "handler" / "datasets").glob("*.py"))),
        "a field of the format's record (handler.datasets.format.Format) or a function of "
        "handler.datasets.reading (names_from, sizes_from, shard_format, shards_readable)",
    ),
)


@pytest.mark.parametrize("rule", RULES, ids=str)
def test_each_rule_is_spelled_in_its_home_only(rule: Rule) -> None:
    copies = scan(rule.pattern, skip=rule.homes)
    where = ", ".join(rule.homes) or "one place, not spelled like this in code"
    assert not copies, (
        f"the {rule.name} lives in {where}. Found what looks like another copy at:\n  "
        + "\n  ".join(copies)
        + f"\n\nCall {rule.instead} instead."
    )


@pytest.mark.parametrize("rule", [r for r in RULES if r.homes], ids=str)
def test_each_home_still_spells_its_rule(rule: Rule) -> None:
    """A pattern that matches nothing, not even in its home, guards nothing: keep it current."""
    assert scan(rule.pattern, skip=tuple(s.path for s in sources() if s.path not in rule.homes)), (
        f"{rule.name}: the pattern {rule.pattern!r} no longer matches {', '.join(rule.homes)}; "
        "update it with the code"
    )


# --- Layers: which part of handler/ may import which (a package or a top-level module) ---

# The data flows inputs → datasets → engine → execution → report → storage → outputs; imports
# point at what a part builds on. Each part lists every part it may import; a new part (a new
# package or top-level module) must be added here, with what it needs.
# Plain types, the error classes, packaged files, a map over forked local processes.
FOUNDATION = {"boxes", "errors", "forked", "resources"}
PACKAGES = FOUNDATION | {
    "storage",
    "datasets",
    "engine",
    "inputs",
    "images",
    "report",
    "execution",
    "outputs",
}
LAYERS: dict[str, set[str]] = {
    "boxes": set(),
    "errors": set(),
    "forked": set(),
    "resources": set(),
    "storage": {"errors"},
    "datasets": FOUNDATION | {"storage"},
    "engine": {"boxes"},  # pure numpy, no I/O
    "inputs": FOUNDATION | {"datasets", "engine"},  # node.json options name formats and thresholds
    # Where a dataset's images are (a format's convention) and their thumbnails: read via storage.
    "images": FOUNDATION | {"datasets", "storage"},
    "report": FOUNDATION | {"datasets", "engine", "images", "inputs", "storage"},
    # Shards write their outcome lines (report.outcome_lines) as chunks of the report.
    "execution": FOUNDATION | {"datasets", "engine", "inputs", "report", "storage"},
    "outputs": set(),
    # The entry points sit above every package; among themselves they import downward too.
    "pipeline": PACKAGES,
    "comparison": PACKAGES,
    # Reads a log (datasets) and fits it (engine): an entry point's job, like comparison's.
    "calibrate": PACKAGES,
    "runtime": PACKAGES,
    "metric": PACKAGES | {"runtime"},
    "mmeval": PACKAGES | {"metric"},
    "progress": PACKAGES | {"pipeline"},
    "entry": set(),  # what the entry points set before numpy is imported
    "cli": PACKAGES | {"calibrate", "comparison", "entry", "pipeline", "progress", "runtime"},
    "__main__": PACKAGES | {"entry", "pipeline", "runtime"},
    "__init__": PACKAGES | {"comparison", "metric"},  # the public API
}


def _part(path: str) -> str:
    """handler/engine/state.py -> engine; handler/cli.py -> cli."""
    inner = path.removeprefix("handler/").split("/")
    return inner[0] if len(inner) > 1 else inner[0].removesuffix(".py")


def _imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every import of handler code, type-only ones included."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = (
                [f"{node.module}.{alias.name}" for alias in node.names] if node.module == "handler" else []
            )
            found += [(node.lineno, module) for module in names or [node.module]]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return [(line, module) for line, module in found if module.startswith("handler.")]


@cache
def _trees() -> dict[str, ast.Module]:
    return {source.path: ast.parse((ROOT / source.path).read_text(encoding="utf-8")) for source in sources()}


def test_each_part_imports_only_the_parts_below_it() -> None:
    parts = {_part(path) for path in _trees()}
    assert parts <= set(LAYERS), f"parts of handler/ missing from LAYERS: {sorted(parts - set(LAYERS))}"
    wrong = [
        f"{path}:{line} imports {module} ({_part(path)} may import: {sorted(LAYERS[_part(path)])})"
        for path, tree in _trees().items()
        for line, module in _imported_modules(tree)
        if (target := module.split(".")[1]) != _part(path) and target not in LAYERS[_part(path)]
    ]
    assert not wrong, "imports against the layers:\n  " + "\n  ".join(wrong)


def test_the_layers_have_no_cycle() -> None:
    done: set[str] = set()

    def visit(part: str, path: tuple[str, ...]) -> None:
        assert part not in path, f"a cycle in LAYERS: {' -> '.join((*path, part))}"
        if part not in done:
            for below in LAYERS[part]:
                visit(below, (*path, part))
            done.add(part)

    for part in LAYERS:
        visit(part, ())


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
