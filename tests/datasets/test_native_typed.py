"""A native JSON document of the usual shape is decoded typed (`nativejson`), JSON Lines records of
it converted: either must read exactly as the plain values read, defects, their words and
numbering included."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from helpers.builders import write_json, write_jsonl

from handler.boxes import Dataset
from handler.datasets import jsondoc, load_dataset, native
from handler.datasets.nativejson import AssetPieces, asset_pieces, decode_native, typed_assets
from handler.errors import DatasetError
from handler.storage.local import LocalSource


def _annotation(**changed: Any) -> dict[str, Any]:
    return {"label": "car", "x_min": 10, "y_min": 10, "x_max": 50, "y_max": 50, **changed}


# Every kind of box the rules judge, confidences from tags, flags, integers where a message quotes them.
_ANNOTATIONS = [
    _annotation(),
    _annotation(label=""),
    _annotation(confidence=1.5),
    _annotation(confidence=2),
    _annotation(x_min=200, x_max=300),
    _annotation(y_max=5),
    _annotation(normalized=True, x_min=2, x_max=3, y_min=0.1, y_max=0.2),
    _annotation(normalized=True, x_min=0.1, x_max=0.3, y_min=0.1, y_max=0.2),
    _annotation(tags={"confidence-model": 0.7}),
    _annotation(tags=[{"name": "confidence-model", "value": 3}]),
    _annotation(tags=[{"name": "confidence-model", "value": "high"}]),
    _annotation(tags={"x": 1}, confidence=0.2),
    _annotation(difficult=True, label="bus", confidence=0),
    _annotation(label="truck", id=5, extra=[1, 2]),
    _annotation(confidence=-0.5, normalized=False),
]
_DOCUMENT = {
    "classes": ["zebra", "car"],
    "assets": [
        {
            "asset_id": "a.jpg",
            "width": 100,
            "height": 100,
            "annotations": _ANNOTATIONS,
            "tags": ["sunny", {"name": "weather", "value": "rain"}],
        },
        {"asset_id": 7, "width": 640.5, "annotations": _ANNOTATIONS[:4]},
        {"asset_id": "c.png", "tags": {"night": True}},
        {"asset_id": "d", "width": 10, "height": 10, "annotations": _ANNOTATIONS[::-1]},
    ],
}


def _read(path: Path, typed: bool, monkeypatch: pytest.MonkeyPatch) -> Dataset:
    """The dataset read typed (decoded, or converted from JSON Lines records), or from plain values."""
    seen: list[bool] = []

    def assets(values: list[Any]) -> Any:
        found = typed_assets(values) if typed else None
        seen.append(found is not None)
        return found

    monkeypatch.setattr(native, "typed_assets", assets)
    if not typed:
        monkeypatch.setattr(native, "decode_native", lambda _: None)
    dataset = load_dataset(LocalSource(path)).dataset
    assert seen == [typed]
    return dataset


def _described(dataset: Dataset) -> dict[str, Any]:
    boxes = dataset.boxes
    # the per-box columns; the shape columns (masks, quadrilaterals) are None for these formats
    fields = [name for name in boxes.__struct_fields__ if name not in ("masks", "quads")]
    columns = {name: getattr(boxes, name).tolist() for name in fields}
    return {
        "assets": (dataset.asset_ids, str(dataset.widths), str(dataset.heights), dataset.asset_tags),
        "classes": dataset.class_names,
        "columns": columns,
        "skipped": [(s.position, s.problem) for s in dataset.skipped],
        "counts": (dataset.skipped_count, dataset.skip_reasons, dataset.confidence_count),
    }


@pytest.mark.parametrize("shape", ["object", "list", "lines"])
def test_a_typed_document_reads_as_its_plain_values(
    shape: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shape == "lines":
        path = write_jsonl(tmp_path / "pred.jsonl", _DOCUMENT["assets"])
    else:
        path = write_json(tmp_path / "pred.json", _DOCUMENT if shape == "object" else _DOCUMENT["assets"])
    typed = _described(_read(path, True, monkeypatch))
    assert typed == _described(_read(path, False, monkeypatch))
    first_asset = "line 1" if shape == "lines" else "assets[0]"
    assert typed["counts"][0] == 25 and typed["skipped"][2] == (
        f"{first_asset}.annotations[3]",
        "2 is greater than the maximum of 1",
    )


@pytest.mark.parametrize(
    ("asset", "error"),
    [
        ({"asset_id": "b", "width": 0}, r"assets\[1\]\.width: 0 is less than or equal to the minimum of 0"),
        (
            {"asset_id": "b", "height": -3.5},
            r"assets\[1\]\.height: -3\.5 is less than or equal to the minimum of 0",
        ),
    ],
)
def test_a_typed_asset_of_no_size_is_the_schema_error(
    asset: dict[str, Any], error: str, tmp_path: Path
) -> None:
    path = write_json(tmp_path / "gt.json", {"assets": [{"asset_id": "a", "width": 5}, asset]})
    assert decode_native(path.read_bytes()) is not None
    with pytest.raises(DatasetError, match=error):
        load_dataset(LocalSource(path))


def _one_box(**changed: Any) -> bytes:
    return json.dumps({"assets": [{"asset_id": "a", "annotations": [_annotation(**changed)]}]}).encode()


@pytest.mark.parametrize(
    "text",
    [
        _one_box(x_min=None),
        _one_box(label=5),
        _one_box(normalized=None),
        b'[{"asset_id": 99999999999999999999999}]',
        b'[{"asset_id": 1.0}]',
        b'{"assets": [], "images": [], "annotations": []}',
    ],
    ids=["null-coordinate", "numeric-label", "null-flag", "huge-id", "float-id", "coco-keys"],
)
def test_a_value_of_another_shape_is_left_to_the_plain_parser(text: bytes) -> None:
    assert decode_native(text) is None


def _in_pieces(path: Path, pieces: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Dataset, list[str]]:
    """Read on two local processes, in pieces of a few assets each or whole (serial); and what
    the read did: `cut N` (N pieces), `whole` (the document decoded at once after the pieces)."""
    monkeypatch.setattr(jsondoc, "PARALLEL_MIN_BYTES", 0 if pieces else 1 << 40)
    monkeypatch.setattr(jsondoc, "PIECE_BYTES", 300)
    did: list[str] = []
    monkeypatch.setattr(native, "asset_pieces", partial(_noted, did, "cut", asset_pieces))
    monkeypatch.setattr(native, "_decode_whole", partial(_noted, did, "whole", native._decode_whole))
    return load_dataset(LocalSource(path), workers=2).dataset, did


def _noted(did: list[str], what: str, function: Any, *args: Any) -> Any:
    result = function(*args)
    did.append(f"cut {len(result.bounds)}" if isinstance(result, AssetPieces) else what)
    return result


@pytest.mark.parametrize("shape", ["object", "list"])
def test_a_big_document_read_in_pieces_side_by_side_reads_as_whole(
    shape: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Skipped annotations in later pieces are named from their own piece, decoded again."""
    document = _DOCUMENT if shape == "object" else _DOCUMENT["assets"]
    path = write_json(tmp_path / "pred.json", document)
    whole, _ = _in_pieces(path, False, monkeypatch)
    read, did = _in_pieces(path, True, monkeypatch)
    assert _described(read) == _described(whole)
    assert did == ["cut 3"] and read.skipped[-1].position.startswith("assets[3]")


def test_a_cut_inside_an_asset_falls_back_to_the_whole_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tags holding objects keyed `asset_id` look like the start of an asset: the pieces cut
    there do not decode, and the document is read whole, as it reads serially."""
    tagged = _annotation(tags=[{"name": "x"}, {"asset_id": "not an asset"}])
    assets = [
        {"asset_id": f"a{k}", "width": 100, "height": 100, "annotations": [tagged] * 9} for k in range(6)
    ]
    path = write_json(tmp_path / "pred.json", {"assets": assets})
    whole, _ = _in_pieces(path, False, monkeypatch)
    read, did = _in_pieces(path, True, monkeypatch)
    assert _described(read) == _described(whole)
    assert did[0].startswith("cut") and did[1:] == ["whole"]


def test_a_bad_size_in_a_later_piece_is_the_schema_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assets = [{"asset_id": f"a{k}", "width": 100, "annotations": _ANNOTATIONS[:3]} for k in range(9)]
    assets[7]["height"] = 0
    path = write_json(tmp_path / "gt.json", {"assets": assets})
    with pytest.raises(
        DatasetError, match=r"assets\[7\]\.height: 0 is less than or equal to the minimum of 0"
    ):
        _in_pieces(path, True, monkeypatch)
