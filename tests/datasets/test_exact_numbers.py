"""The numbers of a file are read with the float64 bits `json.loads` gives them, whatever route
reads it: COCO results cut into pieces (typed, or plain where a piece does not decode typed),
COCO instances, JSON Lines; NaN, Infinity and 1e309 (what `json.dump` writes) included, and
any spacing between the tokens."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from handler.boxes import FloatArray
from handler.datasets import coco, jsondoc
from handler.datasets.ids import DatasetIds
from handler.datasets.reading import parse_document
from handler.storage.registry import open_source

IMAGE_IDS = (1, 2, 7)
CATEGORY_IDS = (1, 3)
# Spellings of one number that JSON (or `json.loads`) reads; each gives the same float64.
_SPELLINGS = (repr, lambda x: f"{x:.17e}", lambda x: f"{x:.17g}", lambda x: f"{x:.3e}")
_WHITESPACE = st.text(alphabet=" \t\r\n", max_size=3)

# Boxes need no image sizes (only polygons do).
NO_SIZES = coco._Sizes(np.empty(0), np.empty(0))


def _spelled(value: float, spelling: int) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        spellings = ("Infinity", "1e309", "1E+400") if value > 0 else ("-Infinity", "-1e309")
        return spellings[spelling % len(spellings)]
    text = _SPELLINGS[spelling % len(_SPELLINGS)](value)
    return text if text[-1].isdigit() else repr(value)  # `1e+16` and the like, never `inf`


_NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-1e4, max_value=1e4),
    st.integers(min_value=-(10**6), max_value=10**6).map(float),
    st.decimals(min_value=-1000, max_value=1000, places=12, allow_nan=False).map(float),
)
_TOKENS = st.tuples(_NUMBERS, st.integers(0, 11)).map(lambda drawn: _spelled(*drawn))


@st.composite
def _result_texts(draw: st.DrawFn) -> list[str]:
    """Result records as text, each with its own spacing around every token."""

    def space() -> str:
        return draw(_WHITESPACE)

    records = []
    for _ in range(draw(st.integers(1, 40))):
        box = f",{space()}".join(draw(_TOKENS) for _ in range(4))
        fields = [
            f'"image_id"{space()}:{space()}{draw(st.sampled_from(IMAGE_IDS))}',
            f'"category_id":{space()}{draw(st.sampled_from(CATEGORY_IDS))}',
            f'"bbox"{space()}:[{space()}{box}{space()}]',
            f'"score":{space()}{draw(_TOKENS)}{space()}',
        ]
        records.append(f"{space()}{{{space()}{','.join(draw(st.permutations(fields)))}}}")
    return records


def _bits(values: FloatArray | None) -> Any:
    return np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)


def _expected(records: list[dict[str, Any]]) -> tuple[FloatArray, FloatArray]:
    """xyxy and scores from `json.loads`' values, x + w as the reader adds them (float64)."""
    xywh = np.array([r["bbox"] for r in records], dtype=np.float64).reshape(-1, 4)
    with np.errstate(invalid="ignore", over="ignore"):
        xyxy = np.concatenate([xywh[:, :2], xywh[:, :2] + xywh[:, 2:]], axis=1)
    return xyxy, np.array([r["score"] for r in records], dtype=np.float64)


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces of a few records each, so that drawn files are cut at many record boundaries."""
    monkeypatch.setattr(jsondoc, "PIECE_BYTES", 300)
    monkeypatch.setattr(jsondoc, "LOOKAHEAD_BYTES", 32)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=_result_texts(), outer=_WHITESPACE)
def test_results_read_with_the_bits_json_loads_gives(
    tmp_path: Path, small_pieces: None, records: list[str], outer: str
) -> None:
    text = f"{outer}[{','.join(records)}{outer}]{outer}".encode()
    path = tmp_path / "results.json"
    path.write_bytes(text)
    source = open_source(str(path))
    document = parse_document(source, text, 1)
    ids = DatasetIds([str(i) for i in IMAGE_IDS], [str(c) for c in CATEGORY_IDS])
    rows = coco._results_rows(source.name, document, ids, NO_SIZES)
    xyxy, score = _expected(json.loads(text))
    assert _bits(rows.xyxy).tolist() == _bits(xyxy).tolist()
    assert _bits(rows.confidence).tolist() == _bits(score).tolist()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=_result_texts())
def test_instances_and_json_lines_read_with_the_bits_json_loads_gives(
    tmp_path: Path, records: list[str]
) -> None:
    images = ",".join(f'{{"id":{i},"width":640,"height":480}}' for i in IMAGE_IDS)
    categories = ",".join(f'{{"id":{c},"name":"c{c}"}}' for c in CATEGORY_IDS)
    text = f'{{"images":[{images}],"categories":[{categories}],"annotations":[{",".join(records)}]}}'
    path = tmp_path / "gt.json"
    path.write_text(text)
    source = open_source(str(path))
    document = parse_document(source, text.encode())
    ids = DatasetIds([str(i) for i in IMAGE_IDS], [str(c) for c in CATEGORY_IDS])
    rows = coco._annotations_rows(source.name, document, ids, NO_SIZES)
    xyxy, score = _expected(json.loads(text)["annotations"])
    assert _bits(rows.xyxy).tolist() == _bits(xyxy).tolist()
    assert _bits(rows.confidence).tolist() == _bits(score).tolist()
    lines = "\n".join(record.replace("\n", " ").replace("\r", " ") for record in records).encode()
    read = _expected(jsondoc.parse_json_lines(source, lines).records)
    loaded = _expected([json.loads(line) for line in lines.splitlines()])
    assert [_bits(column).tolist() for column in read] == [_bits(column).tolist() for column in loaded]
