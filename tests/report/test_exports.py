"""`prelabel-eval export`: the pre-labels of a stored report, in each tool's format, read back by
our own readers to the boxes of the prediction dataset that the policy keeps.

The expected boxes are found apart from the report: the example datasets read and paired again,
each prediction kept when its confidence reaches its class's threshold in `routing.json` (or the
run's one threshold). Every export is read back by the reader of its format and paired with the
same GT (a YOLO folder's fractions become pixels through the GT's image sizes).
"""

from __future__ import annotations

import csv
import html
import importlib
import json
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import numpy as np
import pytest
from helpers.paths import THIRD_PARTY
from helpers.pre_labels import (
    ROUTED_GIVEN,
    TOLERANCE_PX,
    Report,
    boxes,
    expected,
    export,
    gt,
    paired_with_gt,
    read_label_studio,
    routed_report,
    same_boxes,
    stored_report,
)

from handler.cli import _write_files, findings_summary, main
from handler.datasets import PairedBoxes, load_dataset
from handler.datasets.loaded import Loaded
from handler.report.exports.cvat_xml import NOT_XML
from handler.report.exports.targets import EXPORT_TARGETS
from handler.report.findings import Findings
from handler.storage import open_source

COCO = THIRD_PARTY / "coco_val2014_100"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    return routed_report(tmp_path_factory.mktemp("store"))


@pytest.fixture(scope="module")
def drawing_report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """Drawing a box takes a second here: routing sends `person` (the one class with enough boxes
    to route) to drawing."""
    folder = tmp_path_factory.mktemp("drawing")
    costs = folder / "costs.json"
    costs.write_text(json.dumps({"seconds": {"draw": 1.0}}))
    found = stored_report(folder / "store", TIME_COSTS=str(costs))
    assert found.routing["person"] is None
    return found


READERS: dict[str, tuple[str, Callable[[Path, Loaded], PairedBoxes]]] = {
    "label-studio": ("tasks.json", read_label_studio),
    "cvat": ("annotations.xml", lambda path, reference: paired_with_gt(path, reference)),
    "coco": ("coco.json", lambda path, reference: paired_with_gt(path, reference)),
    "yolo": ("labels", lambda path, reference: paired_with_gt(path, reference, "yolo")),
    "yolo-obb": ("labels", lambda path, reference: paired_with_gt(path, reference, "yolo-obb")),
    "yolo-seg": ("labels", lambda path, reference: paired_with_gt(path, reference, "yolo-seg")),
}
# Targets that write masks only: read back on a report scored on masks (test_mask_exports.py).
MASK_ONLY = ("yolo-seg",)
BOX_TARGETS = [target for target in READERS if target not in MASK_ONLY]


def test_every_export_target_is_read_back() -> None:
    """A registered target has its reader here: the round trip below runs on every one."""
    assert set(READERS) == set(EXPORT_TARGETS)


@pytest.mark.parametrize("policy", ["recommended", "single", f"threshold {ROUTED_GIVEN}"])
@pytest.mark.parametrize("target", BOX_TARGETS)
def test_each_export_reads_back_as_the_predictions_the_policy_keeps(
    report: Report, target: str, policy: str, tmp_path: Path
) -> None:
    name, read = READERS[target]
    out = export(report, target, tmp_path / name, "--policy", *policy.split())

    found = boxes(read(out, gt()))

    wanted = expected(report, policy)
    same_boxes(found, wanted)
    if policy == f"threshold {ROUTED_GIVEN}":  # the threshold given: what the graded run kept
        assert len(found[0]) == report.findings["dataset"]["predictions_kept"]


def test_routing_leaves_out_the_classes_it_sends_to_drawing(drawing_report: Report, tmp_path: Path) -> None:
    found = boxes(read_label_studio(export(drawing_report, "label-studio", tmp_path / "t.json"), gt()))
    single = boxes(
        read_label_studio(
            export(drawing_report, "label-studio", tmp_path / "s.json", "--policy", "single"), gt()
        )
    )

    same_boxes(found, expected(drawing_report, "recommended"))
    assert {row[1] for row in single[0]} - {row[1] for row in found[0]} == {"person"}


def test_label_studio_tasks_fit_their_config_and_sort_the_most_work_first(
    report: Report, tmp_path: Path
) -> None:
    out = export(
        report, "label-studio", tmp_path / "tasks.json", "--image-root", "/data/local-files/?d=images/"
    )
    tasks = json.loads(out.read_text())
    config = (tmp_path / "tasks.xml").read_text()

    assert len(tasks) == report.findings["dataset"]["images"]
    assert all(task["data"]["image"].startswith("/data/local-files/?d=images/") for task in tasks)
    regions = [region for task in tasks for region in task["predictions"][0]["result"]]
    assert {(r["from_name"], r["to_name"], r["type"]) for r in regions} == {
        ("label", "image", "rectanglelabels")
    }
    assert (
        '<Image name="image" value="$image"/>' in config
        and '<RectangleLabels name="label" toName="image">' in config
    )
    assert {r["value"]["rectanglelabels"][0] for r in regions} <= {
        line.split('"')[1] for line in config.splitlines() if "<Label " in line
    }
    # Ascending prediction score lists the images as the review queue does, the most work first.
    queue = list(csv.DictReader((report.store / "reports" / report.report_id / "review_queue.csv").open()))
    seconds = {row["asset_id"]: float(row["expected_seconds"]) for row in queue}
    by_image = {
        unquote(task["data"]["image"].removeprefix("/data/local-files/?d=images/")): task for task in tasks
    }
    most = max(seconds.values())
    for asset_id, task in by_image.items():
        prediction = task["predictions"][0]
        assert prediction["score"] == pytest.approx(1 - seconds.get(asset_id, 0.0) / most, abs=1e-6)
        assert (
            "recommended policy" in prediction["model_version"]
            and report.report_id in prediction["model_version"]
        )
    listed = sorted(by_image, key=lambda asset_id: by_image[asset_id]["predictions"][0]["score"])
    assert [seconds.get(asset_id, 0.0) for asset_id in listed] == sorted(seconds.values(), reverse=True) + [
        0.0
    ] * (len(listed) - len(seconds))
    assert seconds[listed[0]] == most > 0 and seconds[queue[0]["asset_id"]] == most


def test_a_report_without_pre_label_candidates_says_to_run_again(
    report: Report, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store"
    shutil.copytree(report.store, store)
    folder = store / "reports" / report.report_id
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["parts"] = [part for part in manifest["parts"] if not part.startswith("pre_labels/")]
    (folder / "manifest.json").write_text(json.dumps(manifest))

    code = main(
        ["export", "latest", "--store", str(store), "--to", "coco", "--out", str(tmp_path / "c.json")]
    )

    assert code == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith("has no pre_labels (made before `prelabel-eval export` existed: run it again)")
    )


def _native_pair(folder: Path, asset: str, sized: bool) -> tuple[Path, Path]:
    """A one-image native pair, the image's size given or not."""
    folder.mkdir(parents=True, exist_ok=True)
    size = {"width": 200, "height": 100} if sized else {}
    box = {"label": 'a "b" <c> & d', "x_min": 10.25, "y_min": 20.5, "x_max": 110.125, "y_max": 70.0}
    paths = []
    for side, extra in (("gt", {}), ("pred", {"confidence": 0.75})):
        path = folder / f"{side}.jsonl"
        path.write_text(json.dumps({"asset_id": asset, **size, "annotations": [{**box, **extra}]}) + "\n")
        paths.append(path)
    return paths[0], paths[1]


HOSTILE_ASSET = 'we<ird> & "quoted" %41 name.jpg'


@pytest.mark.parametrize("target", ["label-studio", "cvat", "coco", "yolo"])
def test_names_that_are_markup_or_escapes_come_back_as_they_were(target: str, tmp_path: Path) -> None:
    gt_file, pred_file = _native_pair(tmp_path / "data", HOSTILE_ASSET, sized=True)
    made = stored_report(tmp_path / "store", gt_file, pred_file, CONFIDENCE_THRESHOLD="0")
    name, read = READERS[target]
    reference = load_dataset(open_source(str(gt_file)))

    paired = read(export(made, target, tmp_path / name), reference)

    assert paired.asset_ids == [HOSTILE_ASSET] and paired.class_names == ['a "b" <c> & d']
    np.testing.assert_allclose(paired.pred.xyxy, [[10.25, 20.5, 110.125, 70.0]], atol=TOLERANCE_PX, rtol=0)


@pytest.mark.parametrize(("target", "works"), [("cvat", False), ("label-studio", False), ("coco", True)])
def test_a_tool_that_needs_image_sizes_refuses_a_report_without_them_in_one_line(
    target: str, works: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt_file, pred_file = _native_pair(tmp_path / "data", "a.jpg", sized=False)
    made = stored_report(tmp_path / "store", gt_file, pred_file, CONFIDENCE_THRESHOLD="0")
    capsys.readouterr()

    code = main(
        ["export", "latest", "--store", str(made.store), "--to", target, "--out", str(tmp_path / "x.json")]
    )

    err = capsys.readouterr().err
    if works:  # COCO boxes are pixels: the file says the size is unknown (null)
        assert code == 0 and json.loads((tmp_path / "x.json").read_text())["images"][0]["width"] is None
    else:
        assert code == 2 and err.count("\n") == 1
        assert not list(tmp_path.glob("*x.*")), "a refused export wrote a file"
        tool = "CVAT" if target == "cvat" else "Label Studio"
        assert err == (
            f"error: report {made.report_id}: image 'a.jpg' has no known size, and {tool} needs one "
            "(the datasets gave neither a size nor the image)\n"
        )


@pytest.mark.parametrize(
    ("asset", "label"), [("a\0b.jpg", "cat"), ("a.jpg", "c\x01t")], ids=["NUL", "control"]
)
def test_a_name_xml_cannot_carry_refuses_cvat_in_one_line(
    asset: str, label: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    box = {"label": label, "x_min": 10, "y_min": 20, "x_max": 110, "y_max": 70}
    for side, extra in (("gt", {}), ("pred", {"confidence": 0.75})):
        line = {"asset_id": asset, "width": 200, "height": 100, "annotations": [{**box, **extra}]}
        (folder / f"{side}.jsonl").write_text(json.dumps(line) + "\n")
    made = stored_report(tmp_path / "store", folder / "gt.jsonl", folder / "pred.jsonl")
    capsys.readouterr()

    code = main(
        ["export", "latest", "--store", str(made.store), "--to", "cvat", "--out", str(tmp_path / "x.xml")]
    )

    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and not (tmp_path / "x.xml").exists()
    assert err.startswith(f"error: report {made.report_id}: ") and "which XML cannot carry" in err


def _xml_char(code: int) -> bool:
    """XML 1.0's Char production, as the specification writes it."""
    return code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or code >= 0x10000


def test_what_cvat_refuses_is_every_character_xml_cannot_carry() -> None:
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    assert NOT_XML.findall(every) == [chr(code) for code in range(sys.maxunicode + 1) if not _xml_char(code)]


# The module, not the function the package names `pre_labels` too.
PRE_LABELS_MODULE = importlib.import_module("handler.report.exports.pre_labels")


def _files(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()
    }


@pytest.fixture(scope="module")
def first_images_bare(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """Five images, the first two with nothing to pre-label: blocks with no box come first."""
    folder = tmp_path_factory.mktemp("bare")
    box = {"label": "cat", "x_min": 10, "y_min": 20, "x_max": 110, "y_max": 70}
    assets = [{"asset_id": f"{n}.jpg", "width": 200, "height": 100} for n in range(5)]
    gt, pred = folder / "gt.jsonl", folder / "pred.jsonl"
    gt.write_text("".join(json.dumps({**a, "annotations": [box]}) + "\n" for a in assets))
    pred.write_text(
        "".join(
            json.dumps({**a, "annotations": [{**box, "confidence": 0.9}] if n >= 2 else []}) + "\n"
            for n, a in enumerate(assets)
        )
    )
    return stored_report(folder / "store", gt, pred)


@pytest.mark.parametrize("which", ["report", "first_images_bare"])
@pytest.mark.parametrize("target", BOX_TARGETS)
def test_blocks_of_any_size_give_the_same_files(
    which: str, target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    # The text is built BLOCK_IMAGES images at a time (an export's memory is one block's text):
    # ids, separators and scores must not show where a block ended.
    made: Report = request.getfixturevalue(which)
    name = READERS[target][0]
    export(made, target, tmp_path / "whole" / name)
    assert made.findings["dataset"]["images"] > 3
    for size in (1, 3):
        monkeypatch.setattr(PRE_LABELS_MODULE, "BLOCK_IMAGES", size)
        export(made, target, tmp_path / f"by{size}" / name)
        assert _files(tmp_path / f"by{size}") == _files(tmp_path / "whole")


def test_a_file_interrupted_while_written_is_not_left_half_written(tmp_path: Path) -> None:
    def pieces() -> Iterator[bytes]:
        yield b"[\n"
        raise KeyboardInterrupt

    target = tmp_path / "out" / "tasks.json"
    with pytest.raises(KeyboardInterrupt):
        _write_files(str(target), iter([(target, pieces())]))
    assert list(target.parent.iterdir()) == []
    _write_files(str(target), iter([(target, iter([b"[", b"]"]))]))
    assert target.read_bytes() == b"[]" and list(target.parent.iterdir()) == [target]


@pytest.fixture(scope="module", params=["example", "coco"])
def policy_report(
    request: pytest.FixtureRequest, report: Report, tmp_path_factory: pytest.TempPathFactory
) -> Report:
    """The routed example, and the real COCO val2014 pair (at 0.5: every prediction kept)."""
    if request.param == "example":
        return report
    store = tmp_path_factory.mktemp("coco") / "store"
    return stored_report(
        store, COCO / "instances_val2014_100.json", COCO / "instances_val2014_fakebbox100_results.json"
    )


def _carried(report: Report) -> set[str]:
    """Every class a box of either side names."""
    reference = report.gt()
    pred = load_dataset(open_source(str(report.pred_file)), None, reference).dataset
    return {
        dataset.class_names[c]
        for dataset in (reference.dataset, pred)
        for c in set(dataset.boxes.class_id.tolist())
    }


def test_page_summary_routing_json_and_export_give_one_recommendation(
    policy_report: Report, tmp_path: Path
) -> None:
    """The places a lead meets the recommendation say the same policy."""
    report = policy_report
    recommended = report.findings["recommendation"]
    folder = report.store / "reports" / report.report_id
    page = (folder / "report.html").read_text()
    # findings -> routing.json: every class either side carries, at the threshold the findings give
    # it (the classes they list; every other class at the single threshold)
    assert _carried(report) <= set(report.routing)
    listed = {row["class"]: row["threshold"] for row in recommended["classes"]}
    assert listed.items() <= report.routing.items()
    assert all(report.routing[name] == recommended["threshold"] for name in set(report.routing) - set(listed))
    # findings -> the headline, the CLI summary and the page: the one sentence, and the figure
    headline = Findings.model_validate(report.findings).headline()
    assert f"Recommended: {recommended['says']}." in headline
    summary = findings_summary(Findings.model_validate(report.findings), "")
    assert f"Recommended: {recommended['says']}." in summary
    assert html.escape(f"Recommended: {recommended['says']}.") in page
    assert 'data-section-figure="recommendation"' in page
    # routing.json -> the export's default policy: exactly the boxes it keeps
    default = boxes(read_label_studio(export(report, "label-studio", tmp_path / "d.json"), report.gt()))
    same_boxes(default, expected(report, "recommended"))
    # never less time saved than any single threshold of the sweep
    sweep = report.findings["confidence_sweep"]["points"]
    assert recommended["seconds_saved"] >= max(point["saved_seconds"] for point in sweep) - 1e-6


def test_a_threshold_below_what_the_report_kept_is_refused_by_name(
    report: Report, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "low.json"
    code = main(
        [
            "export",
            report.report_id,
            "--store",
            str(report.store),
            "--to",
            "coco",
            "--out",
            str(out),
            "--policy",
            "threshold",
            "0.1",
        ]
    )
    err = capsys.readouterr().err.strip()
    assert code != 0 and not out.exists()
    assert err.startswith("error:") and "--policy threshold 0.1" in err and "\n" not in err
    bad = main(
        [
            "export",
            report.report_id,
            "--store",
            str(report.store),
            "--to",
            "coco",
            "--out",
            str(out),
            "--policy",
            "routing",
        ]
    )
    assert bad != 0 and "expected recommended, per-class, single or threshold X" in capsys.readouterr().err


@pytest.mark.parametrize("target", ["coco", "yolo", "label-studio"])
def test_an_export_to_s3_goes_through_the_store_as_locally(
    report: Report, target: str, s3_bucket: str, s3_client: Any, tmp_path: Path
) -> None:
    """`--out s3://bucket/key` writes the same files as `--out PATH`, through the storage layer."""
    export(report, target, tmp_path / "pre labels")
    out = f"s3://{s3_bucket}/out/pre labels"
    assert main(["export", report.report_id, "--store", str(report.store), "--to", target, "--out", out]) == 0
    keys = [entry["Key"] for entry in s3_client.list_objects_v2(Bucket=s3_bucket, Prefix="out/")["Contents"]]
    uploaded = {
        key.removeprefix("out/"): s3_client.get_object(Bucket=s3_bucket, Key=key)["Body"].read()
        for key in keys
    }
    files = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert uploaded == {p.relative_to(tmp_path).as_posix(): p.read_bytes() for p in files}


@pytest.mark.parametrize(
    ("target", "needs"),
    [
        ("label-studio", "no --image-root given"),
        ("cvat", "number attribute `score`"),
        ("coco", "ids are numbered from 1"),
        ("yolo", None),
    ],
)
def test_an_export_says_what_the_tool_needs_and_a_model_version_only_where_written(
    report: Report, target: str, needs: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    export(report, target, tmp_path / READERS[target][0])
    out, err = capsys.readouterr()
    assert ("model_version" in out) == EXPORT_TARGETS[target].carries_model_version
    notes = [line for line in err.splitlines() if line.startswith("note: ")]
    assert len(notes) == (needs is not None) and all(needs in note for note in notes if needs)
