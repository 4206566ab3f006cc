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
        "handler.engine.score.GRADES / grade(), MINIMAL_GRADE",
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
    # To add once the other branches are merged (they fail on this branch today):
    # - outcome labels ("Class-confused", "FP", ...) outside engine/outcomes.py: report/html.py
    #   still spells them; pattern r"\"(Class-confused|False positive|False negative|Confused|FP|FN)\"".
    # - missing confidence -> 1.0, being unified in handler/datasets/.
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


def _public_engine_functions() -> list[tuple[str, str]]:
    found = []
    for source in sources():
        if source.path.startswith("handler/engine/"):
            tree = ast.parse((ROOT / source.path).read_text(encoding="utf-8"))
            found += [
                (source.path, node.name)
                for node in tree.body
                if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("_")
            ]
    return found


def test_engine_functions_have_a_caller_in_the_package() -> None:
    """Test-only and bench-only helpers live in tests/helpers/ and bench/, not in the engine."""
    uses = [
        line
        for source in sources()
        if source.path != "handler/engine/__init__.py"  # a re-export is not a use
        for _, line in source.lines
    ]
    unused = [
        f"{path}: {name}"
        for path, name in _public_engine_functions()
        if sum(len(re.findall(rf"\b{name}\b", line)) for line in uses) < 2  # its definition + a use
    ]
    assert not unused, (
        "public engine functions with no caller in handler/ (move them to tests/helpers/ or bench/):\n  "
        + "\n  ".join(unused)
    )
