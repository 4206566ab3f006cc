"""Every path the user gives that the OS would refuse (a name longer than NAME_MAX, a
path longer than PATH_MAX, a NUL, a file where a folder should be) is one `error:` line naming
the input, through the node's entry point: no traceback, no OSError or ValueError from a reader.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.builders import write_json
from helpers.examples import examples
from helpers.node_run import one_error_line, run_node
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from handler.cli import main as cli_main
from handler.storage.paths import refusal
from handler.storage.registry import STORE_KEY_ROOM

GT = {
    "images": [{"id": 1, "file_name": "a.jpg", "width": 100, "height": 100}],
    "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [1, 1, 10, 10]}],
    "categories": [{"id": 1, "name": "cat"}],
}
RESULTS = [{"image_id": 1, "category_id": 1, "bbox": [1, 1, 10, 10], "score": 0.9}]
NAME_MAX = os.pathconf("/", "PC_NAME_MAX")
PATH_MAX = os.pathconf("/", "PC_PATH_MAX")
# What each input is called in its error line.
LABELS = {
    "GT_DATASET": "error: GT_DATASET ",
    "PRED_DATASET": "error: PRED_DATASET ",
    "GT_NAMES": "error: --gt-names FILE (GT_NAMES) ",
    "store": "error: --store: store root ",
}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("hostile-paths")
    return {
        "gt": str(write_json(folder / "gt.json", GT)),
        "pred": str(write_json(folder / "pred.json", RESULTS)),
    }


def _components(a_file: str) -> st.SearchStrategy[str]:
    return st.one_of(
        st.integers(NAME_MAX - 2, NAME_MAX + 40).map(lambda n: "n" * n),  # around the name limit
        st.text(
            st.characters(blacklist_characters="/", blacklist_categories=("Cs",)), min_size=1, max_size=30
        ),
        st.sampled_from(["x.json", "..", ".", "tmp", "é" * (NAME_MAX // 2 + 1), "a\x00b"]),
        st.just(a_file.lstrip("/")),  # an existing file, then more path after it
    )


def _references(a_file: str) -> st.SearchStrategy[str]:
    many = st.integers(PATH_MAX // 9, PATH_MAX // 7).map(
        lambda n: "/".join(["abcdefgh"] * n)
    )  # over PATH_MAX
    joined = st.lists(_components(a_file), min_size=1, max_size=5).map(lambda parts: "/" + "/".join(parts))
    return st.one_of(joined, many, many.map(lambda path: "/" + path + ".json"))


@settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data(), target=st.sampled_from(sorted(LABELS)))
def test_a_path_the_os_refuses_is_one_line_naming_the_input(
    files: dict[str, str], tmp_path: Path, data: st.DataObject, target: str
) -> None:
    reference = data.draw(_references(files["gt"]), label="reference")
    inputs = {"GT_DATASET": files["gt"], "PRED_DATASET": files["pred"]}
    store = str(tmp_path / "store")
    if target == "store":
        store = reference
    else:
        inputs[target] = reference
    run = run_node(store, **inputs)
    room = STORE_KEY_ROOM if target == "store" else 0
    if refusal(reference, room) is None:  # a path the OS takes: it may still be missing, a folder, ...
        assert "Traceback" not in run.err, run.err[-2000:]
        return
    line = one_error_line(run)
    assert line.startswith(LABELS[target]), line
    assert len(line) < 240, line


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("n" * (NAME_MAX + 1), "File name too long"),
        ("/".join(["abcdefgh"] * (PATH_MAX // 9 + 1)), "File name too long"),
        ("a\x00b.json", "NUL"),
        ("gt.json/x.json", "is a file, not a folder"),
    ],
)
def test_each_refusal_says_why(files: dict[str, str], tmp_path: Path, name: str, why: str) -> None:
    reference = str(Path(files["gt"]).parent / name)
    line = one_error_line(run_node(tmp_path / "store", GT_DATASET=files["gt"], PRED_DATASET=reference))
    assert line.startswith("error: PRED_DATASET ") and why in line, line


def test_a_name_at_the_limit_is_not_refused(tmp_path: Path) -> None:
    assert refusal(str(tmp_path / ("n" * NAME_MAX))) is None


@pytest.mark.parametrize("option", ["--slices", "--html"])
def test_the_commands_file_options_name_themselves(
    files: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    refused = files["gt"] + "/x.json"
    command = (
        ["compare", files["gt"], files["pred"], files["pred"]]
        if option == "--html"
        else [files["gt"], files["pred"]]
    )
    assert cli_main([*command, "--store", str(tmp_path / "store"), option, refused]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith(f"error: {option} ") and "is a file, not a folder" in err and "Traceback" not in err
    ), err
