"""Our own fuzz suite, every example through the node's entry point in-process.

Families: structure-aware documents of every format and odd node inputs (hypothesis
strategies), and byte-level mutations of the real third-party files. Property of every
example: exit 0 with a complete report, or exit 2 with one `error:` line; never a traceback
or a warning; no report object without a manifest; dataset text escaped on the page.

CI size: 80 examples per family, 800 in all (the suite's time budget). A long run:
PRELABEL_FUZZ_EXAMPLES=8400 python -m pytest -q tests/fuzz  (examples per family: 84,000 in all).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import numpy as np
import pytest
from helpers.csv_format import register
from helpers.node_run import NodeRun, run_node
from helpers.paths import THIRD_PARTY
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from handler.datasets import format_names

FAMILY_EXAMPLES = int(os.environ.get("PRELABEL_FUZZ_EXAMPLES", "0")) or 80
FUZZ = settings(
    max_examples=FAMILY_EXAMPLES,
    deadline=None,
    derandomize="PRELABEL_FUZZ_EXAMPLES" not in os.environ,
    suppress_health_check=list(HealthCheck),
    database=None,
)
MARKUP = "<script>x</script>"

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.just(MARKUP),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
numbers = st.one_of(st.floats(min_value=-50, max_value=700), st.integers(-5, 700), values)
bbox = st.one_of(st.lists(numbers, min_size=4, max_size=4), values)


def _assert_property(run: NodeRun, store: Path) -> None:
    assert "Traceback" not in run.err and "Warning" not in run.err, run.err[-3000:]
    assert run.code in (0, 2), (run.code, run.err[-3000:])
    messages = run.messages
    if run.code == 2:
        assert len(messages) == 1 and messages[0].startswith("error: "), run.err[-3000:]
        assert "REPORT_ID" not in run.out
    files = [p for p in (store / "reports").rglob("*") if p.is_file()] if (store / "reports").exists() else []
    folders = {p.relative_to(store / "reports").parts[0] for p in files}
    for folder in folders:  # every report folder published whole
        assert (store / "reports" / folder / "manifest.json").is_file(), files
    assert not [p for p in files if p.name.startswith(".")], files
    if run.code == 0:
        page = (store / "reports" / run.outputs["REPORT_ID"] / "report.html").read_text()
        assert MARKUP not in page


def _run(files: dict[str, bytes], **inputs: str) -> int:
    """The node's exit code on these files, once the property holds."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for name, content in files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        env = {key: str(root / value) if key.endswith("_DATASET") else value for key, value in inputs.items()}
        store = root / "store"
        run = run_node(store, **env)
        _assert_property(run, store)
        return run.code


@st.composite
def coco_documents(draw: st.DrawFn) -> dict[str, Any]:
    images = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "id": st.integers(0, 3) | values,
                    "file_name": st.sampled_from(["a.jpg", "b.jpg", MARKUP]) | values,
                    "width": numbers,
                    "height": numbers,
                }
            ),
            max_size=3,
        )
    )
    annotations = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "id": st.integers(0, 9),
                    "image_id": st.integers(0, 3) | values,
                    "category_id": st.integers(0, 3) | values,
                    "bbox": bbox,
                },
                optional={"iscrowd": values, "area": numbers},
            ),
            max_size=5,
        )
    )
    categories = draw(
        st.lists(
            st.fixed_dictionaries(
                {"id": st.integers(0, 3) | values, "name": st.sampled_from(["cat", MARKUP]) | values}
            ),
            max_size=3,
        )
    )
    document: dict[str, Any] = {"images": images, "annotations": annotations, "categories": categories}
    extra = draw(
        st.dictionaries(
            st.sampled_from(["images", "annotations", "categories", "info", ""]), values, max_size=1
        )
    )
    return {**document, **extra}


results = st.lists(
    st.fixed_dictionaries(
        {
            "image_id": st.integers(0, 3) | values,
            "category_id": st.integers(0, 3) | values,
            "bbox": bbox,
            "score": numbers,
        }
    ),
    max_size=5,
)
GOOD_GT = json.dumps(
    {
        "images": [{"id": 1, "file_name": "a.jpg", "width": 640, "height": 480}],
        "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [10, 10, 50, 50]}],
        "categories": [{"id": 1, "name": "cat"}],
    }
).encode()


@st.composite
def registered_formats(draw: st.DrawFn) -> str | None:
    """A forced format, or None (detection): every format in the registry when drawn, so that
    a new one is fuzzed from the line that registers it on."""
    return draw(st.sampled_from([None, *format_names()]))


FORMATS = registered_formats()
yolo_line = st.lists(
    st.one_of(st.integers(-3, 10**22).map(str), st.floats().map(str), st.text(max_size=4)),
    min_size=0,
    max_size=7,
).map(" ".join)


def _formats(gt_format: str | None, pred_format: str | None) -> dict[str, str]:
    return {k: v for k, v in (("GT_FORMAT", gt_format), ("PRED_FORMAT", pred_format)) if v}


@FUZZ
@given(coco_documents(), results, FORMATS, FORMATS)
def test_coco_documents(
    gt: dict[str, Any], pred: list[Any], gt_format: str | None, pred_format: str | None
) -> None:
    _run(
        {"gt.json": json.dumps(gt).encode(), "pred.json": json.dumps(pred).encode()},
        GT_DATASET="gt.json",
        PRED_DATASET="pred.json",
        **_formats(gt_format, pred_format),
    )


@FUZZ
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(
                ["asset_id", "image", "annotations", "boxes", "predicted_bounding_boxes", "classes", "width"]
            ),
            values,
            max_size=4,
        ),
        max_size=4,
    ),
    FORMATS,
)
def test_json_lines(records: list[Any], pred_format: str | None) -> None:
    content = "\n".join(json.dumps(r) for r in records).encode()
    _run(
        {"gt.json": GOOD_GT, "pred.jsonl": content},
        GT_DATASET="gt.json",
        PRED_DATASET="pred.jsonl",
        **_formats(None, pred_format),
    )


@FUZZ
@given(
    st.lists(yolo_line, max_size=4),
    st.lists(yolo_line, max_size=4),
    st.sampled_from(["cat\n", "", f"{MARKUP}\n", "names: [cat]\n"]),
    FORMATS,
)
def test_label_folders(gt: list[str], pred: list[str], names: str, pred_format: str | None) -> None:
    files = {
        "gt/a.txt": "\n".join(gt).encode(),
        "pred/a.txt": "\n".join(pred).encode(),
        "gt/classes.txt": names.encode(),
    }
    _run(files, GT_DATASET="gt", PRED_DATASET="pred", **_formats(None, pred_format))


@FUZZ
@given(
    st.dictionaries(
        st.sampled_from(["IOU_MIN", "IOU_PERFECT", "CONFIDENCE_THRESHOLD", "GT_FORMAT", "PRED_FORMAT"]),
        st.text(max_size=8) | st.sampled_from(["0.1", "0.5", "0.8", "0.95", "nan", "1e9", "-1"]),
        max_size=5,
    ),
    st.sampled_from(["gt.json", "missing", "", "x" * 300, "../..", "s3x://b"]),
)
def test_node_inputs(inputs: dict[str, str], pred: str) -> None:
    env = {**inputs, "GT_DATASET": "gt.json"}
    if pred:
        env["PRED_DATASET"] = pred
    _run({"gt.json": GOOD_GT}, **env)


# COCO instance masks as written: polygons (lists of x, y lists), RLE with its runs as a list or
# as COCO's compressed string, a box export's empty list; and any value in their places.
rle_counts = st.one_of(
    st.lists(st.integers(-3, 3000), max_size=8),
    st.text(alphabet=st.characters(min_codepoint=48, max_codepoint=111), max_size=12),
    values,
)
segmentation = st.one_of(
    st.lists(st.lists(numbers, min_size=0, max_size=10), max_size=3),
    st.fixed_dictionaries(
        {"size": st.one_of(st.lists(st.integers(-1, 40), max_size=3), values), "counts": rle_counts}
    ),
    st.just([]),
    values,
)


@st.composite
def masked_annotations(draw: st.DrawFn, results: bool) -> list[dict[str, Any]]:
    rows = st.fixed_dictionaries(
        {
            "image_id": st.integers(1, 2) | values,
            "category_id": st.just(1) | values,
            "segmentation": segmentation,
            **({"score": numbers} if results else {"id": st.integers(0, 9)}),
        },
        optional={"bbox": bbox, "iscrowd": st.sampled_from([0, 1]) | values},
    )
    return draw(st.lists(rows, max_size=4))


@FUZZ
@given(
    masked_annotations(False),
    masked_annotations(True),
    st.sampled_from([(640, 480), (30, 20), (0, 0), (None, None)]),
    st.sampled_from(["auto", "boxes", "masks", "polygons"]),
)
def test_coco_masks(
    gt_rows: list[dict[str, Any]], pred_rows: list[dict[str, Any]], size: tuple[Any, Any], score_on: str
) -> None:
    """Instance masks of every kind, well formed or not, on images with and without a size."""
    width, height = size
    gt = {
        "images": [{"id": i, "file_name": f"{i}.jpg", "width": width, "height": height} for i in (1, 2)],
        "annotations": gt_rows,
        "categories": [{"id": 1, "name": "cat"}],
    }
    files = {"gt.json": json.dumps(gt).encode(), "pred.json": json.dumps(pred_rows).encode()}
    _run(files, GT_DATASET="gt.json", PRED_DATASET="pred.json", SCORE_ON=score_on)


def _third_party_pairs() -> list[tuple[Path, Path]]:
    coco = THIRD_PARTY / "coco_val2014_100"
    sahi = THIRD_PARTY / "sahi_visdrone_2"
    return [
        (coco / "instances_val2014_100.json", coco / "instances_val2014_fakebbox100_results.json"),
        (coco / "instances_val2014_100.json", coco / "instances_val2014_fakesegm100_results.json"),
        (sahi / "dataset.json", sahi / "result.json"),
    ]


def _mutate(content: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    data = bytearray(content)
    for position, cut, insert in edits:
        at = position % (len(data) + 1)
        data[at : at + cut] = insert
    return bytes(data)


edits = st.lists(
    st.tuples(
        st.integers(0, 10**7),
        st.integers(0, 8),
        st.binary(max_size=6)
        | st.sampled_from([b"[", b"{", b"\x00", b"\xff\xfe", b"1e400", MARKUP.encode(), b'"', b","]),
    ),
    min_size=1,
    max_size=4,
)


@FUZZ
@given(st.sampled_from(_third_party_pairs()), edits, st.booleans())
def test_third_party_mutations(
    pair: tuple[Path, Path], changes: list[tuple[int, int, bytes]], on_gt: bool
) -> None:
    gt, pred = (p.read_bytes() for p in pair)
    gt, pred = (_mutate(gt, changes), pred) if on_gt else (gt, _mutate(pred, changes))
    _run({"gt.json": gt, "pred.json": pred}, GT_DATASET="gt.json", PRED_DATASET="pred.json")


@st.composite
def _voc_files(draw: st.DrawFn) -> dict[str, bytes]:
    folder = THIRD_PARTY / "voc_padilla_100"
    gts = sorted((folder / "gts" / "pascalvoc_format").glob("*.xml"))[:5]
    target = draw(st.sampled_from(gts))
    files = {f"gt/{p.name}": p.read_bytes() for p in gts}
    files[f"gt/{target.name}"] = _mutate(target.read_bytes(), draw(edits))
    return files


@FUZZ
@given(_voc_files())
def test_voc_mutations(files: dict[str, bytes]) -> None:
    _run(files, GT_DATASET="gt", PRED_DATASET="gt")


def test_a_registered_format_is_fuzzed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The throwaway format is among the formats every family forces, and holds the property."""
    csv = register(monkeypatch).name
    assert find(FORMATS, lambda name: name == csv) == csv
    line = b"a.jpg,100,100,car,10,10,50,50,0.9\n"
    files = {"gt/a.csv": line, "pred/a.csv": line + b"a.jpg,100\n", "bad.json": b"[]"}
    assert _run(files, GT_DATASET="gt", PRED_DATASET="pred") == 0
    assert _run(files, GT_DATASET="gt", PRED_DATASET="bad.json", PRED_FORMAT=csv) == 2


# Masks in the tools' formats: regions drawn (structure-aware) and a real encoding mutated byte by
# byte, on both sides.
SMALL = (8, 6)  # width, height of the images the mask families draw on
points = st.lists(st.lists(numbers, min_size=0, max_size=3), max_size=6) | values


def _brush_rle() -> list[int]:
    from label_studio_sdk.converter.brush import mask2rle

    drawn = [[255 if 1 < x < 6 and 1 < y < 5 else 0 for x in range(SMALL[0])] for y in range(SMALL[1])]
    return list(mask2rle(np.array(drawn, dtype=np.uint8)))


@st.composite
def _brush(draw: st.DrawFn) -> Any:
    mutated = list(_mutate(bytes(_brush_rle()), draw(edits)))
    return draw(st.just(mutated) | st.lists(st.integers(-2, 300), max_size=40) | values)


@st.composite
def _mask_region(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["polygonlabels", "brushlabels"]))
    value = {"points": draw(points)} if kind == "polygonlabels" else {"format": "rle", "rle": draw(_brush())}
    region = {
        "type": kind,
        "original_width": draw(st.just(SMALL[0]) | numbers),
        "original_height": draw(st.just(SMALL[1]) | numbers),
        "value": {**value, kind: draw(st.just(["cat"]) | values)},
    }
    if draw(st.booleans()):
        region["score"] = draw(st.floats(0, 1) | values)
    return region


@FUZZ
@given(st.lists(_mask_region(), max_size=3), st.lists(_mask_region(), max_size=3))
def test_label_studio_masks(annotations: list[dict[str, Any]], predictions: list[dict[str, Any]]) -> None:
    results = [annotations, predictions]
    task = {
        "data": {"image": "a.jpg"},
        "annotations": [{"result": results[0]}],
        "predictions": [{"result": results[1]}],
    }
    _run({"export.json": json.dumps([task]).encode()}, GT_DATASET="export.json", PRED_DATASET="export.json")


def _cvat_mask_shape() -> st.SearchStrategy[str]:
    text = st.text(max_size=12) | st.sampled_from(["0", "2", "8", "-1", "1e9", "nan"])
    crop = st.tuples(text, text, text, text)
    runs = st.lists(st.integers(-2, 60), max_size=8).map(lambda r: ", ".join(map(str, r))) | text
    polygon = st.lists(st.tuples(numbers, numbers), max_size=5).map(
        lambda ps: ";".join(f"{x},{y}" for x, y in ps)
    ) | st.text(max_size=12)
    return st.one_of(
        polygon.map(lambda p: f'<polygon label="cat" points="{escape(p)}"/>'),
        st.tuples(runs, crop).map(
            lambda rc: '<mask label="cat" rle="{}" left="{}" top="{}" width="{}" height="{}"/>'.format(
                *(escape(v) for v in (rc[0], *rc[1]))
            )
        ),
    )


@st.composite
def _cvat_files(draw: st.DrawFn) -> bytes:
    shapes = "".join(draw(st.lists(_cvat_mask_shape(), max_size=3)))
    size = draw(st.sampled_from([f'width="{SMALL[0]}" height="{SMALL[1]}"', 'width="x"', ""]))
    xml = f'<annotations><image id="0" name="a.jpg" {size}>{shapes}</image></annotations>'.encode()
    return _mutate(xml, draw(edits)) if draw(st.booleans()) else xml


@FUZZ
@given(_cvat_files(), _cvat_files())
def test_cvat_masks(gt: bytes, pred: bytes) -> None:
    _run({"gt/annotations.xml": gt, "pred/annotations.xml": pred}, GT_DATASET="gt", PRED_DATASET="pred")


seg_line = st.lists(st.one_of(st.floats(-0.5, 1.5).map(repr), yolo_line), min_size=1, max_size=12).map(
    " ".join
)


@FUZZ
@given(
    st.lists(seg_line, max_size=4),
    st.lists(seg_line, max_size=4),
    st.sampled_from([json.dumps({"a.jpg": list(SMALL)}), "", "{", json.dumps({"a": [0, -1]})]),
    st.sampled_from([None, "yolo-seg"]),
)
def test_yolo_seg_folders(gt: list[str], pred: list[str], sizes: str, forced: str | None) -> None:
    files = {
        "gt/a.txt": "\n".join(["0 0.1 0.1 0.5 0.1 0.5 0.5 0.3 0.6", *gt]).encode(),
        "pred/a.txt": "\n".join(pred).encode(),
        "gt/classes.txt": b"cat\n",
        "gt/sizes.json": sizes.encode(),
    }
    _run(files, GT_DATASET="gt", PRED_DATASET="pred", **_formats(forced, forced))
