"""The formats users bring, on real files written by other projects (tests/data/third_party).

voc_padilla_100 holds one GT as VOC XML, YOLO and two COCO renderings, and one set of
detections as pixel text, normalised text and COCO: read through any of them, the same
boxes must give the same outcome counts. Files are only read there; anything altered or
generated (names files, Ultralytics column order, a prediction cache) goes to tmp_path.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers.builders import write_tree
from helpers.paths import THIRD_PARTY
from helpers.s3_fixtures import put_files

from handler.datasets import Loaded, load_dataset, pair_datasets
from handler.datasets.cartucho import EXPECTED as CARTUCHO_EXPECTED
from handler.datasets.reading import FORMATS
from handler.datasets.yolo import EXPECTED as YOLO_EXPECTED
from handler.engine import Thresholds, evaluate
from handler.errors import DatasetError
from handler.inputs import DEFAULT_THRESHOLDS, parse_inputs
from handler.pipeline import run
from handler.storage import open_source
from handler.storage.local import LocalSource, LocalStore

VOC = THIRD_PARTY / "voc_padilla_100"
VOC_XML = VOC / "gts" / "pascalvoc_format"
VOC_YOLO = VOC / "gts" / "yolo_format"
VOC_COCO_V1 = VOC / "gts" / "coco_format_v1" / "instances_default.json"
VOC_COCO_V2 = VOC / "gts" / "coco_format_v2" / "instances_v2.json"
VOC_COCO_DETS = VOC / "dets" / "coco_format" / "coco_dets.json"
CARTUCHO = THIRD_PARTY / "cartucho_mAP_85"
PODM = CARTUCHO / "podm_tests_sample"

THRESHOLDS = [
    pytest.param(DEFAULT_THRESHOLDS, id="defaults"),
    pytest.param(Thresholds(iou_min=0.5, iou_perfect=0.9, confidence_threshold=0.0), id="iou50-all"),
]


def load(path: Path, reference: Loaded | None = None, fmt: str | None = None) -> Loaded:
    return load_dataset(LocalSource(path), fmt, reference)


def outcome_counts(gt_path: Path, pred_path: Path, thresholds: Thresholds) -> dict[str, int]:
    gt = load(gt_path)
    paired = pair_datasets(gt.dataset, load(pred_path, gt).dataset)
    return evaluate(paired.gt, paired.pred, len(paired.asset_ids), thresholds).tally.count_dict()


@dataclass(frozen=True)
class VocDetections:
    """voc_padilla_100's detections rewritten (in tmp_path) into the formats users bring."""

    pixel_ids: Path  # `cls score x1 y1 x2 y2` as published, plus the class names file
    yolo: Path  # Ultralytics `save_conf` order `cls cx cy w h score`, with a data.yaml
    yolo_every_image: Path  # the same, with an empty .txt for the GT images with no detection
    cache: Path  # a prediction cache aligned with the VOC XML GT's asset order
    yolo_gt_with_sizes: Path  # the YOLO GT plus a sizes.json, to meet pixel predictions


def _ultralytics_line(line: str) -> str:
    cls, score, *box = line.split()
    return " ".join([cls, *box, score])


def _write_yolo(folder: Path, names: list[str]) -> None:
    shutil.copytree(VOC / "dets" / "rel_xywh", folder)
    for file in folder.glob("*.txt"):
        lines = [_ultralytics_line(line) for line in file.read_text().splitlines() if line.strip()]
        file.write_text("".join(f"{line}\n" for line in lines))
    (folder / "data.yaml").write_text("names:\n" + "".join(f"  - {name}\n" for name in names))


def _write_cache(path: Path, gt: Loaded) -> None:
    """One entry per GT asset, in the GT's order: one-hot probabilities scaled by the score."""
    document = json.loads(VOC_COCO_DETS.read_text())
    categories = {c["id"]: c["name"] for c in document["categories"]}
    images = {i["id"]: i for i in document["images"]}
    classes = sorted(gt.dataset.class_names)  # the GT declares no order: the cache uses sorted names
    boxes: dict[str, list[dict[str, object]]] = {}
    for annotation in document["annotations"]:
        image = images[annotation["image_id"]]
        x, y, w, h = annotation["bbox"]
        width, height = image["width"], image["height"]
        probabilities = [0.0] * len(classes)
        probabilities[classes.index(categories[annotation["category_id"]])] = annotation["score"]
        boxes.setdefault(image["file_name"], []).append(
            {
                "x_min": x / width,
                "x_max": (x + w) / width,
                "y_min": y / height,
                "y_max": (y + h) / height,
                "probabilities": probabilities,
            }
        )
    entries = [{"predicted_bounding_boxes": boxes.get(asset_id, [])} for asset_id in gt.dataset.asset_ids]
    path.write_text(json.dumps(entries))


def _write_sizes(folder: Path, gt: Loaded) -> None:
    dataset = gt.dataset
    sizes = {
        asset_id: [width, height]
        for asset_id, width, height in zip(dataset.asset_ids, dataset.widths, dataset.heights, strict=True)
    }
    (folder / "sizes.json").write_text(json.dumps(sizes))


@pytest.fixture(scope="module")
def voc_dets(tmp_path_factory: pytest.TempPathFactory) -> VocDetections:
    root = tmp_path_factory.mktemp("voc_dets")
    names = (VOC / "voc.names").read_text().split()
    shutil.copytree(VOC / "dets" / "abs_xyx2y2", root / "pixel_ids")
    shutil.copy(VOC / "voc.names", root / "pixel_ids" / "voc.names")
    _write_yolo(root / "yolo", names)
    shutil.copytree(root / "yolo", root / "yolo_every_image")
    gt = load(VOC_XML)
    for asset_id in gt.dataset.asset_ids:
        label = root / "yolo_every_image" / (Path(asset_id).stem + ".txt")
        label.touch()
    _write_cache(root / "cache.json", gt)
    shutil.copytree(VOC_YOLO, root / "yolo_gt")
    _write_sizes(root / "yolo_gt", gt)
    return VocDetections(
        root / "pixel_ids", root / "yolo", root / "yolo_every_image", root / "cache.json", root / "yolo_gt"
    )


def test_each_folder_is_detected_from_its_content(voc_dets: VocDetections) -> None:
    detected = {
        VOC_XML: "voc",
        VOC_YOLO: "yolo",
        voc_dets.yolo: "yolo",
        voc_dets.pixel_ids: "cartucho",
        CARTUCHO / "input" / "ground-truth": "cartucho",
        CARTUCHO / "input" / "detection-results": "cartucho",
    }
    for path, name in detected.items():
        assert load(path, load(VOC_XML)).dataset.format == name, path


def test_the_voc_ground_truth_reads_the_same_in_every_format() -> None:
    """SOURCE.md: 100 images, 273 objects, 20 classes, 38 difficult (VOC XML only carries the flag)."""
    datasets = [load(path).dataset for path in (VOC_XML, VOC_YOLO, VOC_COCO_V1, VOC_COCO_V2)]
    for dataset in datasets:
        assert (dataset.image_count, len(dataset.boxes), len(set(dataset.class_names))) == (100, 273, 20)
        assert dataset.skipped_count == 0
    assert int(datasets[0].boxes.difficult.sum()) == 38
    assert datasets[1].normalized and not datasets[0].normalized


@pytest.mark.parametrize("thresholds", THRESHOLDS)
@pytest.mark.parametrize("gt_path", [VOC_YOLO, VOC_COCO_V1, VOC_COCO_V2], ids=["yolo", "coco-v1", "coco-v2"])
def test_gt_formats_give_the_counts_of_the_voc_xml(gt_path: Path, thresholds: Thresholds) -> None:
    assert outcome_counts(gt_path, VOC_COCO_DETS, thresholds) == outcome_counts(
        VOC_XML, VOC_COCO_DETS, thresholds
    )


@pytest.mark.parametrize("thresholds", THRESHOLDS)
@pytest.mark.parametrize("side", ["pixel_ids", "yolo"])
def test_prediction_formats_give_the_counts_of_the_coco_detections(
    voc_dets: VocDetections, side: str, thresholds: Thresholds
) -> None:
    """A text folder scores every GT image, one without a label file as one without predictions."""
    expected = outcome_counts(VOC_XML, voc_dets.cache, thresholds)
    assert outcome_counts(VOC_XML, getattr(voc_dets, side), thresholds) == expected


def test_counts_match_the_published_overlap_at_iou_50() -> None:
    """SOURCE.md: 3 detections overlap only a GT of another class at IoU >= 0.5."""
    counts = outcome_counts(VOC_XML, VOC_COCO_DETS, Thresholds(0.5, 0.9, 0.0))
    assert counts["class_confused"] == 3
    assert counts["correct"] + counts["shifted"] + counts["class_confused"] + counts["false_positive"] == 452


@pytest.mark.parametrize("thresholds", THRESHOLDS)
def test_mixed_pairs_give_the_same_counts(voc_dets: VocDetections, thresholds: Thresholds) -> None:
    expected = outcome_counts(VOC_XML, voc_dets.cache, thresholds)
    assert outcome_counts(VOC_COCO_V1, voc_dets.yolo, thresholds) == expected  # COCO GT + YOLO preds
    assert outcome_counts(VOC_YOLO, voc_dets.yolo, thresholds) == expected  # both normalised: no sizes
    assert outcome_counts(voc_dets.yolo_gt_with_sizes, voc_dets.pixel_ids, thresholds) == expected


@pytest.mark.parametrize("thresholds", THRESHOLDS)
def test_a_prediction_cache_scores_every_gt_image(voc_dets: VocDetections, thresholds: Thresholds) -> None:
    """Entry i is asset i, so the 2 images without detections are scored (their GT boxes are
    false negatives), as they are when the YOLO folder has an empty .txt for them."""
    cache = outcome_counts(VOC_XML, voc_dets.cache, thresholds)
    assert cache == outcome_counts(VOC_XML, voc_dets.yolo_every_image, thresholds)
    partial = outcome_counts(VOC_XML, VOC_COCO_DETS, thresholds)
    gt, dets = load(VOC_XML).dataset, load(VOC_COCO_DETS).dataset
    undetected = set(gt.asset_ids) - set(dets.asset_ids)
    missed = sum(int((gt.boxes.image == gt.asset_ids.index(a)).sum()) for a in undetected)
    assert len(undetected) == 2 and missed > 0
    assert cache == {
        **partial,
        "false_negative": partial["false_negative"] + missed,
        "total": partial["total"] + missed,
    }


def _native_jsonl(path: Path, gt: Loaded) -> Path:
    """The VOC GT as the platform's native JSON Lines, one asset per line in the same order."""
    dataset = gt.dataset
    lines = []
    for index, asset_id in enumerate(dataset.asset_ids):
        boxes = dataset.boxes[dataset.boxes.image == index]
        annotations = [
            {"label": dataset.class_names[c], "x_min": x0, "y_min": y0, "x_max": x1, "y_max": y1}
            for (x0, y0, x1, y1), c in zip(boxes.xyxy.tolist(), boxes.class_id.tolist(), strict=True)
        ]
        width, height = int(dataset.widths[index]), int(dataset.heights[index])
        lines.append({"asset_id": asset_id, "width": width, "height": height, "annotations": annotations})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_native_jsonl_gt_and_a_jsonl_cache(voc_dets: VocDetections, tmp_path: Path) -> None:
    gt = _native_jsonl(tmp_path / "gt.jsonl", load(VOC_XML))
    cache = tmp_path / "cache.jsonl"
    cache.write_text("".join(json.dumps(entry) + "\n" for entry in json.loads(voc_dets.cache.read_text())))
    assert load(cache, load(gt)).dataset.format == "prediction-cache-jsonl"
    for thresholds in (DEFAULT_THRESHOLDS, Thresholds(0.5, 0.9, 0.0)):
        assert outcome_counts(gt, cache, thresholds) == outcome_counts(VOC_XML, voc_dets.cache, thresholds)


@pytest.mark.parametrize("thresholds", THRESHOLDS)
def test_cartucho_text_and_its_coco_conversion_agree(thresholds: Thresholds) -> None:
    """cartucho_mAP_85: 85 images, 686 GT boxes and 494 detections as text and as COCO (whose 38
    categories include 8 that only the detections use: the GT text names 30)."""
    gt_text, pred_text = CARTUCHO / "input" / "ground-truth", CARTUCHO / "input" / "detection-results"
    coco = outcome_counts(PODM / "groundtruths_coco.json", PODM / "detections_coco.json", thresholds)
    assert outcome_counts(gt_text, pred_text, thresholds) == coco
    gt = load(gt_text).dataset
    pred = load(pred_text, load(gt_text)).dataset
    assert (gt.image_count, len(gt.boxes), len(set(gt.class_names)), len(pred.boxes)) == (85, 686, 30, 494)


def test_the_node_runs_coco_gt_against_yolo_predictions(voc_dets: VocDetections, tmp_path: Path) -> None:
    raw = {"GT_DATASET": str(VOC_COCO_V1), "PRED_DATASET": str(voc_dets.yolo), "PRED_FORMAT": "yolo"}
    result = run(parse_inputs(raw), LocalStore(tmp_path / "store"))
    findings = result.findings
    assert (findings.dataset.gt_format, findings.dataset.pred_format) == ("coco", "yolo")
    # the 2 GT images YOLO wrote no label file for are scored as images without predictions
    assert findings.counts.model_dump() == outcome_counts(VOC_XML, voc_dets.cache, DEFAULT_THRESHOLDS)
    assert findings.dataset.gt_only_images == 0
    assert any("2 GT images without a label file" in part for part in findings.dataset.pred_read_as)


# --- Bad inputs, per format: one clear line naming file and position, or a counted skip ---

NAMES = {"classes.txt": "car\nperson\n"}
NATIVE_GT = {
    "classes": ["car", "person"],
    "assets": [
        {"asset_id": "a.jpg", "width": 100, "height": 80, "annotations": []},
        {"asset_id": "b.jpg", "width": 100, "height": 80, "annotations": []},
    ],
}


def voc_xml(*objects: str, width: int = 100, height: int = 80) -> str:
    return (
        f"<annotation>\n<filename>a.jpg</filename>\n"
        f"<size><width>{width}</width><height>{height}</height><depth>3</depth></size>\n"
        + "".join(objects)
        + "</annotation>\n"
    )


def voc_object(name: str, corners: str, difficult: int = 0) -> str:
    """An <object>; `corners` may hold fewer than four numbers, as a broken file does."""
    tags = ("xmin", "ymin", "xmax", "ymax")
    box = "".join(f"<{tag}>{value}</{tag}>" for tag, value in zip(tags, corners.split(), strict=False))
    return f"<object><name>{name}</name><difficult>{difficult}</difficult><bndbox>{box}</bndbox></object>\n"


def cache_entry(*boxes: tuple[str, list[float]]) -> dict[str, object]:
    """One cache entry; a box's corners `x_min y_min x_max y_max` may be fewer than four."""
    corners = ("x_min", "y_min", "x_max", "y_max")
    return {
        "predicted_bounding_boxes": [
            {**dict(zip(corners, map(float, box.split()), strict=False)), "probabilities": probabilities}
            for box, probabilities in boxes
        ]
    }


def cache_file(*first_boxes: tuple[str, list[float]]) -> dict[str, str | bytes]:
    """A cache for NATIVE_GT: `first_boxes` on asset a, nothing on asset b."""
    return {"pred.json": json.dumps([cache_entry(*first_boxes), cache_entry()])}


def read_as_predictions(tmp_path: Path, files: Mapping[str, str | bytes]) -> Loaded:
    """Read `files` against NATIVE_GT: the one file `pred.json`, else the folder `pred` of them."""
    gt = load(write_tree(tmp_path / "gt", {"gt.json": json.dumps(NATIVE_GT)}) / "gt.json")
    folder = write_tree(tmp_path / "pred", files)
    return load(folder / "pred.json" if list(files) == ["pred.json"] else folder, gt)


GOOD_XML = voc_xml(voc_object("car", "10 10 50 50"))
TRUNCATED_XML = GOOD_XML[: GOOD_XML.index("<xmax>")]  # the download stopped inside the first box
CACHE_OK = [cache_entry(("0.1 0.1 0.5 0.5", [0.2, 0.8])), cache_entry()]

ERRORS = [
    pytest.param(
        {**NAMES, "a.txt": "0 0.5 0.5 0.2 0.2\n3 0.5 0.5 0.2 0.2\n"},
        "a.txt: line 2: class id 3 has no name in classes.txt (2 names)",
        id="yolo-unknown-class-id",
    ),
    pytest.param(
        {"a.txt": "0 0.5 0.5 0.2 0.2\n"},
        "a.txt: line 1: class id 0 has no name: expected data.yaml, dataset.yaml, classes.txt or a .names",
        id="yolo-no-names-file",
    ),
    pytest.param(
        {"data.yaml": "names: [car\n", "a.txt": ""},
        "data.yaml: line 2 column 1: expected valid YAML",
        id="yolo-bad-yaml",
    ),
    pytest.param(
        {"data.yaml": "nc: 2\n", "a.txt": "0 0.5 0.5 0.2 0.2\n"},
        "data.yaml: expected `names:` as a list of class names or a mapping of id to name",
        id="yolo-yaml-without-names",
    ),
    pytest.param(
        {**NAMES, "train/a.txt": "", "val/a.txt": ""},
        "'train/a.txt' and 'val/a.txt' name the same image 'a' (names without extension)",
        id="yolo-same-name-twice",
    ),
    pytest.param(
        {**NAMES, "a.jpg": b"", "a.png": b"", "a.txt": ""},
        "'a.jpg' and 'a.png' name the same image 'a'",
        id="yolo-image-with-two-extensions",
    ),
    pytest.param(
        {**NAMES, "a.txt": b"0 0.5 0.5 0.2 0.2\n\xff\n"},
        "a.txt: byte 18: expected UTF-8 text",
        id="yolo-not-utf8",
    ),
    pytest.param(
        {**NAMES, "sizes.json": '{"a": [100]}', "a.txt": ""},
        "sizes.json: 'a': expected [width, height], two positive numbers",
        id="yolo-bad-sizes-file",
    ),
    pytest.param(
        {"a.xml": TRUNCATED_XML},
        "a.xml: line 4 column 87: expected well-formed XML (no element found)",
        id="voc-truncated",
    ),
    pytest.param(
        {"a.xml": "<annotation-set><image/></annotation-set>"},  # (<annotations> is CVAT's)
        "a.xml: expected an <annotation> root element (Pascal VOC), found <annotation-set>",
        id="voc-other-xml",
    ),
    pytest.param(
        {"a.xml": voc_xml(), "b.xml": voc_xml()},
        "'a.xml' and 'b.xml' name the same image 'a'",
        id="voc-two-files-one-image",
    ),
    pytest.param(
        {"pred.json": '[{"predicted_bounding_boxes": [{"x_min": 0.1,'},
        "pred.json: line 1 column 46: expected valid JSON",
        id="cache-truncated",
    ),
    pytest.param(
        {"pred.json": json.dumps(CACHE_OK[:1])},
        "pred.json: 1 predictions but the ground truth",
        id="cache-shorter-than-gt",
    ),
    pytest.param(
        cache_file(("0.1 0.1 0.5 0.5", [0.1, 0.2, 0.7])),
        "pred.json: [0].predicted_bounding_boxes[0]: `probabilities` has 3 values but the ground truth has "
        "2 classes (car, person)",
        id="cache-class-index-without-name",
    ),
    pytest.param(
        {"pred.json": json.dumps([{"probabilities": [0.2, 0.8]}, {"probabilities": [0.9, 0.1]}])},
        "pred.json: [0]: an image classification prediction (`probabilities` per image): "
        "this node evaluates object detection",
        id="cache-classification",
    ),
    pytest.param(
        {**NAMES, "b.txt": "car 0.9 10 10 50 50\n7 0.8 10 10 50 50\n"},
        "b.txt: line 2: class id 7 has no name in classes.txt (2 names)",
        id="cartucho-unknown-class-id",
    ),
    pytest.param(
        {"notes.txt": "hello world\n", "readme.md": "# data\n"},
        "pred: unknown dataset format; tried " + ", ".join(f.name for f in FORMATS if f.kind == "folder"),
        id="undetectable-folder",
    ),
]


@pytest.mark.parametrize(("files", "message"), ERRORS)
def test_bad_input_is_one_clear_line(tmp_path: Path, files: dict[str, str | bytes], message: str) -> None:
    with pytest.raises(DatasetError) as raised:
        read_as_predictions(tmp_path, files)
    text = str(raised.value)
    assert message in text and "\n" not in text


def test_a_prediction_cache_is_not_a_ground_truth(tmp_path: Path) -> None:
    path = write_tree(tmp_path, {"cache.json": json.dumps(CACHE_OK)}) / "cache.json"
    with pytest.raises(DatasetError, match=r"cache\.json: a prediction cache is aligned by position"):
        load(path)


SKIPS = [
    pytest.param(
        {**NAMES, "a.txt": "0 0.5 0.5 0.2 0.2\n0 0.3 0."},
        "a.txt line 2",
        f"{YOLO_EXPECTED}, got 3 values",
        id="yolo-truncated",
    ),
    pytest.param(
        {**NAMES, "a.txt": "0 0.5 0.5 0.2 0.2\n0 0.5 0.5 0.2\n"},
        "a.txt line 2",
        f"{YOLO_EXPECTED}, got 4 values",
        id="yolo-4-numbers",
    ),
    pytest.param(
        {**NAMES, "a.txt": "0 0.5 0.5 0.2 0.2\n1 1.5 0.5 0.2 0.2\n"},
        "a.txt line 2",
        "box [1.4, 0.4, 1.6, 0.6] lies entirely outside the 0-1 normalised image",
        id="yolo-outside",
    ),
    pytest.param(
        {**NAMES, "a.txt": "0 0.5 0.5 0.2 0.2\n1 0.5 0.5 -0.2 0.2\n"},
        "a.txt line 2",
        "negative width or height",
        id="yolo-negative-width",
    ),
    pytest.param(
        {**NAMES, "a.txt": "0 0.5 0.5 0.2 0.2\n1 0.5 abc 0.2 0.2\n"},
        "a.txt line 2",
        "'abc' is not a number",
        id="yolo-not-a-number",
    ),
    pytest.param(
        {"a.xml": voc_xml(voc_object("car", "10 10 50 50"), voc_object("car", "10 10 50"))},
        "a.xml object #2",
        "expected a <bndbox> with numbers in <xmin>, <ymin>, <xmax>, <ymax>",
        id="voc-3-corners",
    ),
    pytest.param(
        {"a.xml": voc_xml(voc_object("car", "10 10 50 50"), voc_object("car", "120 10 150 50"))},
        "a.xml object #2",
        "box [120, 10, 150, 50] lies entirely outside its 100x80 image",
        id="voc-outside",
    ),
    pytest.param(
        {"a.xml": voc_xml(voc_object("car", "10 10 50 50"), voc_object("car", "50 10 10 50"))},
        "a.xml object #2",
        "x_max < x_min",
        id="voc-reversed",
    ),
    pytest.param(
        cache_file(("0.1 0.1 0.5 0.5", [0.2, 0.8]), ("0.1 0.1 0.5", [0.2, 0.8])),
        "[0].predicted_bounding_boxes[1]",
        "y_max is not a finite number",
        id="cache-3-corners",
    ),
    pytest.param(
        cache_file(("0.1 0.1 0.5 0.5", [0.2, 0.8]), ("1.1 0.1 1.5 0.5", [0.2, 0.8])),
        "[0].predicted_bounding_boxes[1]",
        "box [1.1, 0.1, 1.5, 0.5] lies entirely outside the 0-1 normalised image",
        id="cache-outside",
    ),
    pytest.param(
        {"a.txt": "car 10 10 50 50\ncar 10 10 50\n"},
        "a.txt line 2",
        CARTUCHO_EXPECTED,
        id="cartucho-truncated",
    ),
    pytest.param(
        {"sizes.json": '{"a.jpg": [100, 80]}', "a.txt": "car 10 10 50 50\ncar 0.9 120 10 150 50\n"},
        "a.txt line 2",
        "box [120, 10, 150, 50] lies entirely outside its 100x80 image",
        id="cartucho-outside",
    ),
]


@pytest.mark.parametrize(("files", "position", "problem"), SKIPS)
def test_a_bad_box_is_skipped_counted_and_listed(
    tmp_path: Path, files: dict[str, str | bytes], position: str, problem: str
) -> None:
    dataset = read_as_predictions(tmp_path, files).dataset
    assert dataset.skipped_count == 1 and len(dataset.boxes) == 1
    assert [(s.position, s.problem) for s in dataset.skipped] == [(position, problem)]


def test_a_box_partly_outside_its_image_is_kept_as_it_is(tmp_path: Path) -> None:
    files = {**NAMES, "a.txt": "0 0.95 0.5 0.2 0.2\n"}
    dataset = read_as_predictions(tmp_path, files).dataset
    assert dataset.skipped_count == 0
    assert dataset.boxes.xyxy[0].tolist() == pytest.approx([0.85, 0.4, 1.05, 0.6])


def test_folders_on_s3_give_the_counts_of_the_local_folders(
    voc_dets: VocDetections, s3_bucket: str, s3_client: Any
) -> None:
    put_files(
        s3_client,
        s3_bucket,
        [
            (f"{prefix}/{file.relative_to(local).as_posix()}", file)
            for local, prefix in ((VOC_XML, "gt"), (voc_dets.yolo, "runs/predict"))
            for file in sorted(p for p in local.rglob("*") if p.is_file())
        ],
    )
    gt = load_dataset(open_source(f"s3://{s3_bucket}/gt"))
    pred = load_dataset(open_source(f"s3://{s3_bucket}/runs/predict/"), None, gt)
    assert (gt.dataset.format, pred.dataset.format) == ("voc", "yolo")
    paired = pair_datasets(gt.dataset, pred.dataset)
    tally = evaluate(paired.gt, paired.pred, len(paired.asset_ids), DEFAULT_THRESHOLDS).tally
    assert tally.count_dict() == outcome_counts(VOC_XML, voc_dets.yolo, DEFAULT_THRESHOLDS)
