"""Every defect the hostile-input campaign found, through the node's entry point.

Each case ends in OK or one `error:` line (exit 2): no traceback, no warning, and a message
that names the user's path, says what to fix and quotes at most ~80 characters.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.builders import write_json, write_tree
from helpers.node_run import NodeRun, one_error_line, run_node
from helpers.paths import ROOT

from handler.__main__ import main
from handler.cli import main as cli_main
from handler.errors import QUOTE_LIMIT

GT = {
    "images": [{"id": 1, "file_name": "a.jpg", "width": 100, "height": 100}],
    "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [1, 1, 10, 10]}],
    "categories": [{"id": 1, "name": "cat"}],
}
RESULT = {"image_id": 1, "category_id": 1, "bbox": [1, 1, 10, 10], "score": 0.9}
DEEP = "[" * 1000 + "]" * 1000


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    return {"gt": write_json(tmp_path / "gt.json", GT), "pred": write_json(tmp_path / "pred.json", [RESULT])}


def _deep(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document).replace('"DEEP"', DEEP))
    return path


def test_deep_nesting_in_a_bbox_is_skipped_with_a_short_quote(tmp_path: Path, files: dict[str, Path]) -> None:
    pred = _deep(tmp_path / "deep.json", [{**RESULT, "bbox": "DEEP"}, RESULT])
    run = run_node(tmp_path / "store", GT_DATASET=str(files["gt"]), PRED_DATASET=str(pred))
    assert run.code == 0, run.err
    assert "Traceback" not in run.err


def test_deep_nesting_in_a_field_of_an_image_that_is_not_read_is_passed_over(
    tmp_path: Path, files: dict[str, Path]
) -> None:
    # The reader takes an image's id, name and size; a value it never looks into is not walked.
    gt = _deep(tmp_path / "deep.json", {**GT, "images": [{**GT["images"][0], "extra": "DEEP"}]})
    run = run_node(tmp_path / "store", GT_DATASET=str(gt), PRED_DATASET=str(files["pred"]))
    assert run.code == 0, run.err
    assert "Traceback" not in run.err


def test_deeper_than_the_json_parser_allows_says_nested_too_deeply(
    tmp_path: Path, files: dict[str, Path]
) -> None:
    pred = tmp_path / "deeper.json"
    pred.write_text("[" * 5000 + "]" * 5000)
    line = one_error_line(run_node(tmp_path / "store", GT_DATASET=str(files["gt"]), PRED_DATASET=str(pred)))
    assert "nested too deeply" in line


@pytest.mark.parametrize(("side", "forced"), [("PRED", "coco"), ("PRED", "prediction-cache"), ("GT", "coco")])
def test_a_forced_format_that_does_not_fit_names_the_one_it_looks_like(
    tmp_path: Path, files: dict[str, Path], side: str, forced: str
) -> None:
    gt = files["pred"] if side == "GT" else files["gt"]
    env = {"GT_DATASET": str(gt), "PRED_DATASET": str(files["pred"]), f"{side}_FORMAT": forced}
    line = one_error_line(run_node(tmp_path / "store", **env))
    assert f"format '{forced}' does not fit" in line and "looks like coco-results" in line


@pytest.mark.parametrize("reference", ["x" * 300, "/tmp/" + "x" * 300 + ".json"])
def test_a_reference_longer_than_a_file_name_is_one_line(
    tmp_path: Path, files: dict[str, Path], reference: str
) -> None:
    line = one_error_line(run_node(tmp_path / "store", GT_DATASET=str(files["gt"]), PRED_DATASET=reference))
    assert "File name too long" in line and len(line) < 200


# Root reads every folder through two capabilities; dropped (setpriv, util-linux), the permission
# bits hold for root too, so the test below runs as root (CI) the same as as a user.
WITHOUT_ROOT_OVERRIDE = (
    "--bounding-set=-dac_override,-dac_read_search",
    "--inh-caps=-dac_override,-dac_read_search",
)


def _run_without_root_override(store: Path, **inputs: str) -> NodeRun:
    setpriv = shutil.which("setpriv")
    assert setpriv, "setpriv (util-linux) is needed to drop root's file-permission override"
    done = subprocess.run(
        [setpriv, *WITHOUT_ROOT_OVERRIDE, "--", sys.executable, "-m", "handler", "--store", str(store)],
        env={**os.environ, "PYTHONPATH": str(ROOT), **inputs},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return NodeRun(done.returncode, done.stdout, done.stderr)


def test_a_folder_with_an_unreadable_subfolder_names_the_users_folder(
    tmp_path: Path, files: dict[str, Path]
) -> None:
    folder = write_tree(
        tmp_path / "labels", {"a.txt": "0 0.5 0.5 0.2 0.2\n", "locked/b.txt": "0 0.5 0.5 0.2 0.2\n"}
    )
    (folder / "locked").chmod(0)
    run = _run_without_root_override if os.geteuid() == 0 else run_node
    try:
        line = one_error_line(run(tmp_path / "store", GT_DATASET=str(folder), PRED_DATASET=str(folder)))
    finally:
        (folder / "locked").chmod(0o755)
    assert line.startswith(f"error: {folder}: cannot list") and "Permission denied" in line


def test_proc_as_a_dataset_folder_is_one_line(tmp_path: Path, files: dict[str, Path]) -> None:
    one_error_line(run_node(tmp_path / "store", GT_DATASET=str(files["gt"]), PRED_DATASET="/proc"))


def test_a_folder_whose_entries_vanish_while_listed_reads_what_remains(tmp_path: Path) -> None:
    # A dangling symlink stands for an entry deleted between the listing and the look at it.
    folder = write_tree(tmp_path / "labels", {"classes.txt": "cat\n", "a.txt": "0 0.5 0.5 0.2 0.2\n"})
    (folder / "b.txt").symlink_to(tmp_path / "gone.txt")
    run = run_node(tmp_path / "store", GT_DATASET=str(folder), PRED_DATASET=str(folder))
    assert run.code == 0, run.err


@pytest.mark.parametrize("special", ["/proc/self/mem", "/dev/zero", "/dev/urandom", "zero.jsonl"])
def test_special_files_are_refused_at_once(tmp_path: Path, files: dict[str, Path], special: str) -> None:
    if special == "zero.jsonl":
        (tmp_path / special).symlink_to("/dev/zero")
        special = str(tmp_path / special)
    line = one_error_line(run_node(tmp_path / "store", GT_DATASET=str(files["gt"]), PRED_DATASET=special))
    assert special in line


def test_a_file_over_the_size_limit_is_refused(
    tmp_path: Path, files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRELABEL_MAX_DATASET_BYTES", "100")
    line = one_error_line(
        run_node(tmp_path / "store", GT_DATASET=str(files["gt"]), PRED_DATASET=str(files["pred"]))
    )
    assert "larger than 100 bytes" in line and "PRELABEL_MAX_DATASET_BYTES" in line


def test_a_huge_yolo_class_id_is_range_checked_without_a_warning(tmp_path: Path) -> None:
    gt = write_tree(tmp_path / "gt", {"classes.txt": "cat\n", "a.txt": "0 0.5 0.5 0.2 0.2\n"})
    pred = write_tree(
        tmp_path / "pred", {"a.txt": "0 0.5 0.5 0.2 0.2 0.9\n1000000000000000000000 0.5 0.5 0.2 0.2 0.9\n"}
    )
    run = run_node(tmp_path / "store", GT_DATASET=str(gt), PRED_DATASET=str(pred))
    assert run.code == 0, run.err
    assert "Warning" not in run.err and "-9223372036854775808" not in run.err


def test_yolo_predictions_without_names_say_why_the_gt_names_were_not_used(tmp_path: Path) -> None:
    # The GT's only line is not a YOLO line, so the GT is not read as YOLO and its names do not apply.
    gt = write_tree(tmp_path / "gt", {"classes.txt": "cat\n", "a.txt": "cat 0.1 0.1 0.3 0.3\n"})
    pred = write_tree(tmp_path / "pred", {"a.txt": "0 0.5 0.5 0.2 0.2 0.9\n"})
    line = one_error_line(run_node(tmp_path / "store", GT_DATASET=str(gt), PRED_DATASET=str(pred)))
    assert f"the ground truth {gt} was read as" in line


@pytest.mark.parametrize("line", ["0 0.5 0.5 0.2", "0 0.1 0.1 0.2 0.1 0.2 0.2 x", "1 2 3"])
def test_a_label_line_that_fits_no_text_format_is_named_with_its_file_and_line(
    tmp_path: Path, line: str
) -> None:
    """Four numbers (a box's size short), a polygon ending in a word, three: no format reads them,
    and none is guessed (seven numbers and more are a YOLO-seg polygon)."""
    gt = write_tree(tmp_path / "gt", {"a.txt": "", "b.txt": f"\n{line}\n"})
    pred = write_tree(tmp_path / "pred", {"a.txt": "0 0.5 0.5 0.2 0.2 0.9\n"})
    message = one_error_line(run_node(tmp_path / "store", GT_DATASET=str(gt), PRED_DATASET=str(pred)))
    side = "error: ground truth (GT_DATASET): "
    assert message.startswith(f"{side}{gt / 'b.txt'}: line 2: `{line}` fits no label line: expected ")
    assert "yolo `class x_center y_center width height [confidence]`" in message
    assert "yolo-obb `class x1 y1 x2 y2 x3 y3 x4 y4 [confidence]`" in message
    assert "yolo-seg `class x1 y1" in message


def test_a_missing_local_folder_names_the_reference_not_the_store(
    tmp_path: Path, files: dict[str, Path]
) -> None:
    line = one_error_line(run_node(tmp_path / "store", GT_DATASET="gt", PRED_DATASET=str(files["pred"])))
    assert line.startswith("error: ground truth (GT_DATASET) 'gt': no such file or folder")
    assert "datasets/gt" not in line


def test_a_long_value_is_quoted_short(tmp_path: Path, files: dict[str, Path]) -> None:
    pred = write_json(tmp_path / "long.json", [{**RESULT, "category_id": "x" * 250_000}, RESULT])
    run = run_node(tmp_path / "store", GT_DATASET=str(files["gt"]), PRED_DATASET=str(pred))
    assert run.code == 0, run.err
    findings = (tmp_path / "store" / "reports" / run.outputs["REPORT_ID"] / "findings.json").read_text()
    runs = re.findall("x{10,}", findings)
    assert runs and max(map(len, runs)) <= QUOTE_LIMIT


def test_utf16_says_save_as_utf8(tmp_path: Path, files: dict[str, Path]) -> None:
    pred = tmp_path / "u16.json"
    pred.write_bytes(json.dumps([RESULT]).encode("utf-16"))
    line = one_error_line(run_node(tmp_path / "store", GT_DATASET=str(files["gt"]), PRED_DATASET=str(pred)))
    assert "UTF-16" in line and "save it as UTF-8" in line


def test_a_json_named_folder_says_it_is_a_folder(tmp_path: Path, files: dict[str, Path]) -> None:
    (tmp_path / "pred.json").unlink()
    folder = write_tree(tmp_path / "pred.json", {"notes.txt": "hello\n"})
    line = one_error_line(run_node(tmp_path / "store", GT_DATASET=str(files["gt"]), PRED_DATASET=str(folder)))
    assert "is a folder, not a JSON file" in line


def test_an_empty_key_in_an_inputs_file_says_remove_it(tmp_path: Path, files: dict[str, Path]) -> None:
    inputs = write_json(
        tmp_path / "inputs.json", {"GT_DATASET": str(files["gt"]), "PRED_DATASET": "p", "": "x"}
    )
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["--inputs", str(inputs), "--store", str(tmp_path / "store")], environ={})
    assert code == 2 and err.getvalue().startswith("error: unknown input '': remove it")


def _special(kind: str, tmp_path: Path) -> Path:
    """A file that is not a regular one: a device that never ends, or a FIFO nobody writes."""
    if kind == "device":
        return Path("/dev/zero")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return fifo


@pytest.mark.parametrize("kind", ["device", "fifo"])
@pytest.mark.parametrize("key", ["GT_DATASET", "TIME_COSTS", "GT_NAMES", "inputs file", "calibrate log"])
def test_a_special_file_as_any_input_is_one_line_at_once(
    tmp_path: Path, files: dict[str, Path], kind: str, key: str
) -> None:
    """Refused before it is read: no read until the memory cap, no wait for a writer."""
    special = _special(kind, tmp_path)
    inputs = {"GT_DATASET": str(files["gt"]), "PRED_DATASET": str(files["pred"])}
    if key in ("inputs file", "calibrate log"):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            if key == "inputs file":
                code = main(["--store", str(tmp_path / "store"), "--inputs", str(special)])
            else:
                code = cli_main(["calibrate", str(special), "--out", str(tmp_path / "costs.json")])
        run = NodeRun(code, out.getvalue(), err.getvalue())
    else:
        run = run_node(tmp_path / "store", **{**inputs, key: str(special)})
    line = one_error_line(run)
    assert f"{special}: not a regular file (a device, pipe or socket)" in line


def test_a_dota_label_line_of_twelve_values_is_named_not_its_header(tmp_path: Path) -> None:
    header = "imagesource:GoogleEarth\ngsd:0.146\n"
    line = "10 10 20 10 20 20 10 20 plane 0 extra more"
    gt = write_tree(tmp_path / "gt", {"a.txt": header + line + "\n"})
    message = one_error_line(run_node(tmp_path / "store", GT_DATASET=str(gt), PRED_DATASET=str(gt)))
    assert f"{gt / 'a.txt'}: line 3: `{line}` fits no label line: expected " in message


def test_a_special_file_as_a_class_map_names_the_option_once(tmp_path: Path, files: dict[str, Path]) -> None:
    env = {"GT_DATASET": str(files["gt"]), "PRED_DATASET": str(files["pred"]), "PRED_CLASS_MAP": "/dev/zero"}
    message = one_error_line(run_node(tmp_path / "store", **env))
    assert message.count("PRED_CLASS_MAP") == 1 and "'/dev/zero': cannot read it" in message


@pytest.mark.parametrize("costs", ["--seconds-draw 1e-320", "denormal file"])
def test_seconds_near_zero_draw_the_page(tmp_path: Path, files: dict[str, Path], costs: str) -> None:
    """A from-scratch time of a denormal makes the share saved minus infinity: drawn at the floor."""
    if costs == "denormal file":
        write_json(tmp_path / "costs.json", {"seconds": {"draw": 1e-320}})
        option = ["--time-costs", str(tmp_path / "costs.json")]
    else:
        option = costs.split()
    store = tmp_path / "store"
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli_main([str(files["gt"]), str(files["pred"]), *option, "--store", str(store)])
    assert code == 0 and "Traceback" not in err.getvalue(), err.getvalue()
    assert list(store.glob("reports/*/report.html"))
