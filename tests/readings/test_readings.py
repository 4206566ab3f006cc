"""Did you mean…?: each export mistake gets the reading that undoes it, with the clean score;
honest weak models and clean pairs get none."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Final

import numpy as np
import orjson
import pytest
from helpers import mixups
from helpers.node_run import run_node
from helpers.paths import THIRD_PARTY

from handler.__main__ import main
from handler.comparison import compare
from handler.execution import ExecutionOptions, read_and_plan
from handler.features import ANALYSES
from handler.inputs import parse_inputs
from handler.storage.local import LocalStore

COCO: Final = THIRD_PARTY / "coco_val2014_100"
COCO_GT: Final = COCO / "instances_val2014_100.json"
COCO_RESULTS: Final = COCO / "instances_val2014_fakebbox100_results.json"
VOC_GT: Final = THIRD_PARTY / "voc_padilla_100" / "gts" / "coco_format_v1" / "instances_default.json"
CARTUCHO: Final = THIRD_PARTY / "cartucho_mAP_85" / "input"
# The mistake (one, or two at once), and every option that undoes it with its value (None: a class
# map file, a fitted scale): what a real tool or script writes when one step is skipped.
MISTAKES: Final = {
    "permuted": ([mixups.confused, mixups.permuted], {"PRED_CLASS_MAP": None}),
    "yolo index": ([mixups.yolo_index], {"PRED_CLASS_MAP": None}),
    "places from 1": ([mixups.one_based], {"PRED_CLASS_MAP": None}),
    "corners": ([mixups.corners], {"PRED_BOX": "x1 y1 x2 y2"}),
    "letterbox 640": ([mixups.letterboxed(640)], {"PRED_FRAME": "letterbox 640"}),
    "letterbox top-left 640": ([mixups.letterboxed_top_left(640)], {"PRED_FRAME": "letterbox-top-left 640"}),
    "rect letterbox 640/32": ([mixups.letterboxed_rect(640, 32)], {"PRED_FRAME": "letterbox 640 stride 32"}),
    "rect letterbox 1280/64": (
        [mixups.letterboxed_rect(1280, 64)],
        {"PRED_FRAME": "letterbox 1280 stride 64"},
    ),
    "resized 416": ([mixups.resized(416)], {"PRED_FRAME": "resized 416"}),
    "normalised": ([mixups.normalised], {"PRED_FRAME": "normalized"}),
    "normalised (h, w)": ([mixups.normalised_hw], {"PRED_FRAME": "swapped"}),
    "tf [ymin, xmin, ymax, xmax]": (
        [mixups.tf_normalised],
        {"PRED_BOX": "y1 x1 y2 x2", "PRED_FRAME": "normalized"},
    ),
    "scaled x2": ([mixups.scaled(2)], {"PRED_FRAME": None}),
    "scores in percent": ([mixups.rescored(100)], {"PRED_SCORE": "scale 100"}),
    "scores as bytes and corners": (
        [mixups.rescored(255), mixups.corners],
        {"PRED_SCORE": "scale 255", "PRED_BOX": "x1 y1 x2 y2"},
    ),
    "names title-cased": ([mixups.spelled(str.title)], {"PRED_CLASS_MAP": None}),
    "names of the other dataset, upper-case, snake": (
        [mixups.spelled(lambda n: mixups.OTHER_SPELLING.get(n, n).upper().replace(" ", "_"))],
        {"PRED_CLASS_MAP": None},
    ),
    "names as Open Images and Objects365 spell them, the rest plural": (
        [mixups.spelled(lambda n: mixups.OPEN_IMAGES.get(n) or mixups.plural(n).title())],
        {"PRED_CLASS_MAP": None},
    ),
    "half the names the trainer's own, the others as Open Images spells them": (
        [
            mixups.on_classes(0.5, mixups.spelled(mixups.unrelated)),
            mixups.spelled(lambda n: mixups.OPEN_IMAGES.get(n, n.upper())),
        ],
        {"PRED_CLASS_MAP": None},
    ),
    "names of the trainer's own": ([mixups.spelled(mixups.unrelated)], {"PRED_CLASS_MAP": None}),
    "half the names the trainer's own": (
        [mixups.on_classes(0.5, mixups.spelled(mixups.unrelated))],
        {"PRED_CLASS_MAP": None},
    ),
    "names hyphenated and scores in percent": (
        [mixups.spelled(lambda n: n.replace(" ", "-")), mixups.rescored(100)],
        {"PRED_SCORE": "scale 100", "PRED_CLASS_MAP": None},
    ),
    "corners in a letterbox 640": (
        [mixups.letterboxed(640), mixups.corners],
        {"PRED_BOX": "x1 y1 x2 y2", "PRED_FRAME": "letterbox 640"},
    ),
    "centres in a resized 512": (
        [mixups.resized(512), mixups.centred],
        {"PRED_BOX": "cx cy w h", "PRED_FRAME": "resized 512"},
    ),
    "corners and yolo index": (
        [mixups.corners, mixups.yolo_index],
        {"PRED_BOX": "x1 y1 x2 y2", "PRED_CLASS_MAP": None},
    ),
}
# A permutation is read back from the matches (classes with too few keep their ids), a scale
# from the matched boxes' sizes (jittered ones bias it a little): both give nearly the clean score.
# A class of the trainer's own whose boxes no GT box matches, of any class, stays unread.
CLOSE: Final = {
    "permuted": 0.02,
    "scaled x2": 0.03,
    "names of the trainer's own": 0.005,
    "half the names the trainer's own": 0.005,
    "half the names the trainer's own, the others as Open Images spells them": 0.005,
}


def _options(found: mixups.Rescored, tmp_path: Path) -> dict[str, str]:
    """The proposed reading's options as inputs-file keys (a class map written as a file)."""
    options = {}
    for part in found.reading.parts:
        value = part.value
        if part.class_map:
            value = str(tmp_path / "class_map.json")
            Path(value).write_text(json.dumps(dict(part.class_map)))
        options[part.key] = value
    return options


def _applied(tmp_path: Path, gt: Path, pred: Path, found: mixups.Rescored) -> mixups.Weighed:
    """The run with the proposed reading applied through its options."""
    return mixups.weigh(gt, pred, tmp_path / "store", **_options(found, tmp_path))


def _weak_results(tmp_path: Path, gt: Path) -> Path:
    """A middling honest model of `gt`: what the VOC cases start from (it has no results file)."""
    document = orjson.loads(gt.read_bytes())
    path = tmp_path / "weak.json"
    path.write_bytes(
        orjson.dumps(mixups.weak_model(document, 7, miss=0.2, confuse=0.1, extra=0.3, jitter=0.05))
    )
    return path


@pytest.fixture(scope="module")
def clean_runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[tuple[str, bool], tuple[Path, mixups.Weighed]]:
    """Per ground truth, with and without a detector's own confusions: its clean results and their
    run (no reading), made once for every mistake of that ground truth."""
    work = tmp_path_factory.mktemp("clean")
    found = {}
    for name, gt in (("coco", COCO_GT), ("voc", VOC_GT)):
        results = COCO_RESULTS if name == "coco" else _weak_results(work, gt)
        for confused in (False, True):
            base = [mixups.confused] if confused else []
            clean_file = mixups.write_mistake(gt, results, base, work / f"{name}_{confused}.json")
            clean = mixups.weigh(gt, clean_file, work / "store")
            assert clean.found is None
            found[name, confused] = (results, clean)
    return found


@pytest.mark.parametrize("ground_truth", ["coco", "voc"])
@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_each_mistake_is_named_and_its_option_gives_back_the_clean_score(
    tmp_path: Path,
    ground_truth: str,
    mistake: str,
    clean_runs: dict[tuple[str, bool], tuple[Path, mixups.Weighed]],
) -> None:
    gt = COCO_GT if ground_truth == "coco" else VOC_GT
    clean_results, clean = clean_runs[ground_truth, mistake == "permuted"]
    edits, options = MISTAKES[mistake]
    wrong = mixups.write_mistake(gt, clean_results, edits, tmp_path / "wrong.json")
    weighed = mixups.weigh(gt, wrong, tmp_path / "store")
    found = weighed.found
    if weighed.score == clean.score:  # the GT's own ids are these places (VOC's 1..20): no mistake
        assert found is None and mistake == "places from 1"
        return
    assert found is not None, "no reading proposed"
    assert {part.key: part.value for part in found.reading.parts}.keys() == options.keys()
    assert all(
        value is None or part.value == value for part in found.reading.parts if (value := options[part.key])
    )
    assert found.under.score > weighed.score + 0.02
    applied = _applied(tmp_path, gt, wrong, found)
    assert applied.score == pytest.approx(found.under.score, abs=1e-9) and applied.found is None
    assert applied.score == pytest.approx(clean.score, abs=CLOSE.get(mistake, 1e-9))


# A ground truth written another way (with the predictions' own mistake, if any): the readings of
# both sides that undo them.
GT_MISTAKES: Final = {
    "corners": (mixups.gt_corners, [], [("GT_BOX", "x1 y1 x2 y2")]),
    "0-1": (mixups.gt_normalised, [], [("GT_FRAME", "normalized")]),
    "corners in 0-1": (
        lambda gt: mixups.gt_normalised(mixups.gt_corners(gt)),
        [],
        [("GT_BOX", "x1 y1 x2 y2"), ("GT_FRAME", "normalized")],
    ),
    "0-1, predictions in percent": (
        mixups.gt_normalised,
        [mixups.rescored(100)],
        [("PRED_SCORE", "scale 100"), ("GT_FRAME", "normalized")],
    ),
}


@pytest.mark.parametrize("ground_truth", ["coco", "voc"])
@pytest.mark.parametrize("mistake", list(GT_MISTAKES))
def test_a_ground_truth_written_another_way_is_read_on_its_own_side(
    tmp_path: Path, ground_truth: str, mistake: str
) -> None:
    """The GT is trusted, but a GT file read the wrong way is not: the reading names GT_BOX, GT_FRAME."""
    gt = COCO_GT if ground_truth == "coco" else VOC_GT
    results = COCO_RESULTS if ground_truth == "coco" else _weak_results(tmp_path, gt)
    gt_edit, pred_edits, expected = GT_MISTAKES[mistake]
    wrong_gt = tmp_path / "gt.json"
    wrong_gt.write_bytes(orjson.dumps(gt_edit(orjson.loads(gt.read_bytes()))))
    wrong = mixups.write_mistake(gt, results, pred_edits, tmp_path / "wrong.json")
    clean = mixups.weigh(gt, results, tmp_path / "store")
    weighed = mixups.weigh(wrong_gt, wrong, tmp_path / "store")
    found = weighed.found
    assert found is not None and [(p.key, p.value) for p in found.reading.parts] == expected
    applied = mixups.weigh(wrong_gt, wrong, tmp_path / "store", **dict(expected))
    assert applied.score == pytest.approx(clean.score, abs=1e-9) and applied.found is None


def test_the_clean_coco_pair_scores_as_the_issue_says(tmp_path: Path) -> None:
    weighed = mixups.weigh(COCO_GT, COCO_RESULTS, tmp_path / "store")
    assert weighed.score == pytest.approx(0.37, abs=0.005) and weighed.grade == "Partial assist"


def test_cartucho_corners_written_as_size_propose_x_y_w_h(tmp_path: Path) -> None:
    gt, dets = CARTUCHO / "ground-truth", CARTUCHO / "detection-results"
    wrong = mixups.rewrite_lines(dets, tmp_path / "dets", mixups.corners_to_size)
    clean = mixups.weigh(gt, dets, tmp_path / "store")
    weighed = mixups.weigh(gt, wrong, tmp_path / "store")
    assert clean.found is None and weighed.found is not None
    assert [(p.key, p.value) for p in weighed.found.reading.parts] == [("PRED_BOX", "x y w h")]
    assert _applied(tmp_path, gt, wrong, weighed.found).score == pytest.approx(clean.score, abs=1e-9)


def test_cartucho_names_in_another_order_propose_the_mapping(tmp_path: Path) -> None:
    gt, dets = CARTUCHO / "ground-truth", CARTUCHO / "detection-results"
    names = sorted(
        {line.split()[0] for file in dets.glob("*.txt") for line in file.read_text().splitlines() if line}
    )
    shuffled = np.random.default_rng(3).permutation(names).tolist()
    wrong = mixups.rewrite_lines(
        dets, tmp_path / "dets", mixups.renamed(dict(zip(names, shuffled, strict=True)))
    )
    clean = mixups.weigh(gt, dets, tmp_path / "store")
    weighed = mixups.weigh(gt, wrong, tmp_path / "store")
    assert weighed.found is not None and [p.key for p in weighed.found.reading.parts] == ["PRED_CLASS_MAP"]
    assert _applied(tmp_path, gt, wrong, weighed.found).score == pytest.approx(clean.score, abs=0.02)


def test_cartucho_names_spelled_another_way_on_either_side_are_read_as_the_gt_spells_them(
    tmp_path: Path,
) -> None:
    gt, dets = CARTUCHO / "ground-truth", CARTUCHO / "detection-results"
    clean = mixups.weigh(gt, dets, tmp_path / "store")
    upper = mixups.rewrite_lines(dets, tmp_path / "dets", lambda tokens: [tokens[0].upper(), *tokens[1:]])
    titled = mixups.rewrite_lines(gt, tmp_path / "gt", lambda tokens: [tokens[0].title(), *tokens[1:]])
    for gt_side, pred_side in ((gt, upper), (titled, dets)):
        weighed = mixups.weigh(gt_side, pred_side, tmp_path / "store")
        found = weighed.found
        assert found is not None and [p.key for p in found.reading.parts] == ["PRED_CLASS_MAP"]
        applied = _applied(tmp_path, gt_side, pred_side, weighed.found)
        assert applied.score == pytest.approx(clean.score, abs=1e-9) and applied.found is None


# A step applied to part of the data: the geometry that undoes it on the part, with its score.
PARTIAL: Final = {
    "letterbox 640 on 30% of the images": (
        [mixups.on_images(0.3, mixups.letterboxed(640))],
        {"PRED_FRAME": "letterbox 640"},
    ),
    "corners on half the images": ([mixups.on_images(0.5, mixups.corners)], {"PRED_BOX": "x1 y1 x2 y2"}),
    "corners on a fifth of the classes": (
        [mixups.on_classes(0.2, mixups.corners)],
        {"PRED_BOX": "x1 y1 x2 y2"},
    ),
    "minimal-rectangle letterbox 640 stride 32 on 40% of the images": (
        [mixups.on_images(0.4, mixups.letterboxed_rect(640, 32))],
        {"PRED_FRAME": "letterbox 640 stride 32"},
    ),
    "corners in a letterbox 640 on 40% of the images": (
        [mixups.on_images(0.4, mixups.chained(mixups.letterboxed(640), mixups.corners))],
        {"PRED_BOX": "x1 y1 x2 y2", "PRED_FRAME": "letterbox 640"},
    ),
    "every other box of each image in a letterbox 640": (
        [mixups.on_boxes(mixups.letterboxed(640))],
        {"PRED_FRAME": "letterbox 640"},
    ),
    "corners on every other box of each image": (
        [mixups.on_boxes(mixups.corners)],
        {"PRED_BOX": "x1 y1 x2 y2"},
    ),
    "scores in percent and every other box of each image x2": (
        [mixups.rescored(100), mixups.on_boxes(mixups.scaled(2))],
        {"PRED_SCORE": "scale 100", "PRED_FRAME": None},
    ),
    "scores in percent and resized 512 on 40% of the images": (
        [mixups.rescored(100), mixups.on_images(0.4, mixups.resized(512))],
        {"PRED_SCORE": "scale 100", "PRED_FRAME": "resized 512"},
    ),
}


@pytest.mark.parametrize("ground_truth", ["coco", "voc"])
@pytest.mark.parametrize("mistake", list(PARTIAL))
def test_a_step_applied_to_part_of_the_data_is_named_with_its_score(
    tmp_path: Path,
    ground_truth: str,
    mistake: str,
    clean_runs: dict[tuple[str, bool], tuple[Path, mixups.Weighed]],
) -> None:
    """The images (or classes) the step ran on are named, and read that way the run scores about
    what the clean one does; no read option applies it."""
    gt = COCO_GT if ground_truth == "coco" else VOC_GT
    clean_results, clean = clean_runs[ground_truth, False]
    edits, options = PARTIAL[mistake]
    wrong = mixups.write_mistake(gt, clean_results, edits, tmp_path / "wrong.json")
    weighed = mixups.weigh(gt, wrong, tmp_path / "store")
    found = weighed.found
    assert found is not None, "no reading proposed"
    assert {part.key for part in found.reading.parts} == set(options)
    assert all(
        value is None or part.value == value for part in found.reading.parts if (value := options[part.key])
    )
    assert found.reading.partial and found.under.score > weighed.score + 0.02
    assert found.under.score == pytest.approx(clean.score, abs=0.01)


@pytest.mark.parametrize("ground_truth", ["coco", "voc"])
@pytest.mark.parametrize("part", ["boxes", "images"])
def test_a_ground_truth_written_another_way_in_part_is_named_with_its_score(
    tmp_path: Path,
    ground_truth: str,
    part: str,
    clean_runs: dict[tuple[str, bool], tuple[Path, mixups.Weighed]],
) -> None:
    """Every other box of each image (or every other image) of the GT written as corners by a
    second tool: the GT's part is named, and read that way the run scores what the clean one does."""
    gt = COCO_GT if ground_truth == "coco" else VOC_GT
    results, clean = clean_runs[ground_truth, False]
    wrong = tmp_path / "gt.json"
    wrong.write_bytes(orjson.dumps(mixups.gt_corners_on(part)(orjson.loads(gt.read_bytes()))))
    weighed = mixups.weigh(wrong, results, tmp_path / "store")
    found = weighed.found
    assert found is not None, "no reading proposed"
    assert [(p.key, p.value) for p in found.reading.parts] == [("GT_BOX", "x1 y1 x2 y2")]
    assert found.reading.partial and found.under.score > weighed.score + 0.02
    assert found.under.score == pytest.approx(clean.score, abs=0.01)


@pytest.mark.parametrize("gt", [COCO_GT, VOC_GT], ids=["coco", "voc"])
@pytest.mark.parametrize("seed", range(4))
def test_an_honest_weak_model_gets_no_reading(tmp_path: Path, gt: Path, seed: int) -> None:
    """The small version of `bench/readings.py` (the false-alarm rate, in docs/readings.md)."""
    pred = mixups.random_weak_model(gt, 100 + seed, tmp_path / "weak.json")
    assert mixups.weigh(gt, pred, tmp_path / "store", threshold="0").found is None


@pytest.mark.parametrize(
    "habit",
    [mixups.grown(1.15), mixups.grown(0.9), mixups.shifted(4), mixups.confused],
    ids=["larger", "smaller", "shifted", "confused"],
)
def test_a_model_with_a_habit_is_not_corrected(tmp_path: Path, habit: mixups.Mistake) -> None:
    """Boxes a little too large or small, a few pixels off, classes confused: the model, not the file."""
    pred = mixups.write_mistake(COCO_GT, COCO_RESULTS, [habit], tmp_path / "habit.json")
    assert mixups.weigh(COCO_GT, pred, tmp_path / "store").found is None


def test_the_node_warns_on_stderr_and_its_inputs_file_applies_the_reading(tmp_path: Path) -> None:
    wrong = mixups.write_mistake(COCO_GT, COCO_RESULTS, [mixups.corners], tmp_path / "wrong.json")
    given = {"GT_DATASET": str(COCO_GT), "PRED_DATASET": str(wrong)}
    warned = run_node(tmp_path / "store", **given)
    assert warned.code == 0 and warned.outputs["EFFICIENCY_LEVEL"] == "Minimal assist"
    assert any(
        m.startswith("warning: Did you mean the predictions with boxes written as [x1, y1, x2, y2]?")
        for m in warned.messages
    )
    inputs = tmp_path / "inputs.json"
    inputs.write_text(json.dumps({**given, "PRED_BOX": "x1 y1 x2 y2"}))
    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()):
        assert main(["--store", str(tmp_path / "store"), "--inputs", str(inputs)], environ={}) == 0
    assert json.loads(out.getvalue().splitlines()[-1])["EFFICIENCY_LEVEL"] == "Partial assist"


def test_a_reading_of_part_of_the_files_stands_in_the_read_as_line_beside_the_option_applied(
    tmp_path: Path,
) -> None:
    """Scores in percent, and every other box of each image x2: the score scale given, the line
    says it; the boxes left are named there too, not applied, and the page's card offers no option."""
    edits = [mixups.rescored(100), mixups.on_boxes(mixups.scaled(2))]
    wrong = mixups.write_mistake(COCO_GT, COCO_RESULTS, edits, tmp_path / "w.json")
    store = tmp_path / "store"
    run = run_node(store, GT_DATASET=str(COCO_GT), PRED_DATASET=str(wrong), PRED_SCORE="scale 100")
    assert run.code == 0, run.err[-3000:]
    report = store / "reports" / run.outputs["REPORT_ID"]
    findings = json.loads((report / "findings.json").read_text())
    found, read_as = findings["other_reading"], findings["dataset"]["pred_read_as"]
    assert found["only"] and "confidences out of 100 (given)" in read_as
    on_part = found["says"].removeprefix("the predictions ")
    assert read_as[-1] == f"{on_part} (found, not applied: no read option applies it to part of the files)"
    assert on_part.startswith(f"on {len(found['only'])} of the ") and on_part.endswith("to multiply by 0.5")
    page = (report / "report.html").read_text()
    card = page[page.index('class="reading proposed"') :]
    assert "no read option applies it to part of the files" in card[: card.index("</div></div>")]
    assert "--pred-frame" not in page


def test_names_of_the_trainers_own_are_mapped_by_the_matches_in_the_node_s_warning(tmp_path: Path) -> None:
    wrong = mixups.write_mistake(
        COCO_GT, COCO_RESULTS, [mixups.spelled(mixups.unrelated)], tmp_path / "w.json"
    )
    warned = run_node(tmp_path / "store", GT_DATASET=str(COCO_GT), PRED_DATASET=str(wrong))
    said = next(m for m in warned.messages if m.startswith("warning: Did you mean"))
    assert "the predictions with class names mapped one to one as the matched boxes say" in said
    assert "0.37" in said


def test_a_few_extra_classes_of_the_trainer_s_own_beside_right_ones_get_no_reading(tmp_path: Path) -> None:
    """A second head's boxes under its own labels (copies of boxes the model already drew): no
    GT box is left for them, so no mapping scores better."""
    results = orjson.loads(COCO_RESULTS.read_bytes())
    extra = [{**r, "category_id": f"extra-{i % 3}"} for i, r in enumerate(results[::7])]
    pred = tmp_path / "extra.json"
    pred.write_bytes(orjson.dumps(results + extra))
    assert mixups.weigh(COCO_GT, pred, tmp_path / "store").found is None


def test_compare_applies_the_reading_to_both_prediction_sets(tmp_path: Path) -> None:
    wrong = mixups.write_mistake(COCO_GT, COCO_RESULTS, [mixups.normalised], tmp_path / "wrong.json")
    both = compare(str(COCO_GT), str(wrong), str(wrong), inputs={"PRED_FRAME": "normalized"})
    clean = mixups.weigh(COCO_GT, COCO_RESULTS, tmp_path / "store")
    assert both.context.a.assistance_score == pytest.approx(clean.score, abs=1e-9)


VOC: Final = THIRD_PARTY / "voc_padilla_100"
CLEAN: Final = {
    "coco2014": (COCO_GT, COCO_RESULTS, {"threshold": "0"}),
    "coco2017": (
        THIRD_PARTY / "coco_val2017_img2299" / "gt_ignore_test.json",
        THIRD_PARTY / "coco_val2017_img2299" / "dt_ignore_test.json",
        {"threshold": "0"},
    ),
    "voc yolo": (
        VOC / "gts" / "pascalvoc_format",
        VOC / "dets" / "rel_xywh",
        {"PRED_LAYOUT": "class score cx cy w h", "PRED_NAMES": str(VOC / "voc.names")},
    ),
    "voc corners": (
        VOC / "gts" / "pascalvoc_format",
        VOC / "dets" / "abs_xyx2y2",
        {"PRED_NAMES": str(VOC / "voc.names")},
    ),
    "cartucho": (CARTUCHO / "ground-truth", CARTUCHO / "detection-results", {}),
    "toy": (
        THIRD_PARTY / "padilla_toy_7" / "groundtruths",
        THIRD_PARTY / "padilla_toy_7" / "detections",
        {"GT_LAYOUT": "class x y w h", "PRED_LAYOUT": "class score x y w h pixels", "IOU_MIN": "0.3"},
    ),
    "visdrone": (
        THIRD_PARTY / "sahi_visdrone_2" / "dataset.json",
        THIRD_PARTY / "sahi_visdrone_2" / "result.json",
        {"threshold": "0"},
    ),
}


@pytest.mark.parametrize("case", list(CLEAN))
def test_a_clean_third_party_pair_gets_no_reading(tmp_path: Path, case: str) -> None:
    gt, pred, extra = CLEAN[case]
    assert mixups.weigh(gt, pred, tmp_path / "store", **extra).found is None


def test_an_image_without_a_label_file_is_an_image_without_predictions(tmp_path: Path) -> None:
    """`yolo predict save_txt` writes no file for an image it found nothing in: with a GT that lists
    the image, it is scored as an image with no predictions (its GT boxes missed), and said."""
    gt, dets, extra = CLEAN["voc yolo"]
    files = sorted(dets.glob("*.txt"))
    absent, emptied = tmp_path / "absent", tmp_path / "emptied"
    for folder in (absent, emptied):
        folder.mkdir()
        for index, file in enumerate(files):
            if index % 4:
                (folder / file.name).write_bytes(file.read_bytes())
            elif folder == emptied:
                (folder / file.name).write_text("")
    gt_images = len(list(gt.glob("*.xml")))
    without = gt_images - len(files) + len(files[::4])
    inputs = parse_inputs({"GT_DATASET": str(gt), "PRED_DATASET": str(absent), **extra})
    plan = read_and_plan(inputs, LocalStore(tmp_path / "store"), ExecutionOptions(workers=1), ANALYSES)
    assert plan.sides is not None
    assert f"{without} GT images without a label file read as images with no boxes" in " ".join(
        plan.sides.pred_names.read_as
    )
    scored = {folder: mixups.weigh(gt, folder, tmp_path / "store", **extra) for folder in (absent, emptied)}
    assert scored[absent].score == pytest.approx(scored[emptied].score, abs=1e-12)
