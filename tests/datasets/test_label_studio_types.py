"""Wrong JSON types where a Label Studio export holds a list, an object or a string (a number for
`predictions`, a list for a region's `type`, an object for `result`, a malformed URL as
`data.image`): the evaluation and `calibrate` both end in a result or one `error:` line."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Final

import pytest
from helpers.examples import examples
from helpers.paths import EXAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from handler.cli import main as cli_main

EXPORT: Final = json.loads((EXAMPLES / "label_studio_export.json").read_text(encoding="utf-8"))
# Where a value is replaced, from a task down: a path of keys, `*` being an element of a list.
PATHS: Final = (
    ("predictions",),
    ("annotations",),
    ("data",),
    ("data", "image"),
    ("annotations", "*"),
    ("annotations", "*", "result"),
    ("annotations", "*", "lead_time"),
    ("annotations", "*", "parent_prediction"),
    ("annotations", "*", "result", "*"),
    ("annotations", "*", "result", "*", "type"),
    ("annotations", "*", "result", "*", "value"),
    ("annotations", "*", "result", "*", "value", "rectanglelabels"),
    ("annotations", "*", "result", "*", "value", "x"),
    ("predictions", "*"),
    ("predictions", "*", "result"),
    ("predictions", "*", "model_version"),
    ("predictions", "*", "result", "*", "value"),
    ("predictions", "*", "result", "*", "value", "width"),
)
VALUES: Final = st.one_of(
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", "http://[::1", "/data/local-files/?d=", "rectanglelabels", "%zz", "\u00e9.jpg"]),
    st.lists(st.sampled_from(["rectanglelabels", 1, None]), max_size=2),
    st.dictionaries(st.sampled_from(["x", "id", "result"]), st.integers(0, 2), max_size=2),
    st.none(),
    st.booleans(),
)


def _replaced(document: list[Any], task: int, path: tuple[str, ...], value: Any) -> list[Any]:
    changed = copy.deepcopy(document)
    node: Any = changed[task % len(changed)]
    for key in path[:-1]:
        node = node[0] if key == "*" else node.get(key)
        if not isinstance(node, dict | list) or not node:
            return changed
    if path[-1] == "*" and isinstance(node, list):
        node[0] = value
    elif isinstance(node, dict):
        node[path[-1]] = value
    return changed


@settings(
    max_examples=examples(24),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    task=st.integers(0, 30),
    path=st.sampled_from(PATHS),
    value=VALUES,
    command=st.sampled_from(["run", "calibrate"]),
)
def test_a_wrong_type_is_a_result_or_one_line(
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    task: int,
    path: tuple[str, ...],
    value: Any,
    command: str,
) -> None:
    folder = tmp_path_factory.mktemp("ls")
    export = folder / "export.json"
    export.write_text(json.dumps(_replaced(EXPORT, task, path, value)), encoding="utf-8")
    argv = (
        ["calibrate", str(export), "--out", str(folder / "costs.json")]
        if command == "calibrate"
        else [str(export), str(export), "--store", str(folder / "s")]
    )
    capsys.readouterr()
    code = cli_main(argv)
    error = capsys.readouterr().err
    assert code in (0, 2), error
    if code == 2:
        lines = error.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and str(export) in lines[0], error


def test_predictions_that_are_no_list_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    export = tmp_path / "export.json"
    export.write_text(json.dumps(_replaced(EXPORT, 2, ("predictions",), 5)), encoding="utf-8")
    assert cli_main([str(export), str(export), "--store", str(tmp_path / "s")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    expected = f"{export}: tasks[2].predictions: expected a list, got a JSON number"
    assert line == f"error: ground truth (GT_DATASET): {expected}"
