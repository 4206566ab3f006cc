"""The `segmentation` text kernel against `json.loads`: the points are the floats CPython reads
(bit for bit), a counts string is the text json.loads gives, each row's kind is what its parsed
value is; any bytes at all are read without a crash."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from handler.kernels import segmentation_text
from handler.kernels import segmentation_text as kinds
from handler.kernels.segmentation_text import Segmentations, scanned

PROPERTY = settings(max_examples=300, deadline=None)


def _scan(values: list[bytes], sized: bool = True) -> Segmentations:
    lengths = np.array([len(v) for v in values], dtype=np.int64)
    ends = np.cumsum(lengths)
    size = np.full(len(values), 10.0 if sized else np.nan)
    return scanned(b"".join(values), ends - lengths, ends, size, size.copy())


spaces = st.text(" \t\r\n", max_size=3)
digits = st.text("0123456789", min_size=1, max_size=25)


@st.composite
def json_numbers(draw: st.DrawFn) -> str:
    """A JSON number as any writer may spell it: sign, leading digits, fraction, exponent."""
    whole = draw(st.sampled_from(["0", "9"]) | digits.filter(lambda d: d[0] != "0"))
    fraction = draw(st.none() | digits)
    exponent = draw(st.none() | st.tuples(st.sampled_from("eE"), st.sampled_from(["", "+", "-"]), digits))
    text = draw(st.sampled_from(["", "-"])) + whole
    text += "" if fraction is None else "." + fraction
    return text + ("" if exponent is None else "".join(exponent)[:6])


# Digits about a double's 53 bits with a small exponent: where a quick reading would round twice.
near_exact = st.builds(lambda d, e: f"{d}e{e}", st.integers(2**52, 2**57), st.integers(-25, 25))
numbers = st.one_of(
    json_numbers().filter(lambda t: math.isfinite(float(t))),
    near_exact,
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(-(10**300), 10**300).map(str),
    st.sampled_from(["-0", "-0.0", "0e0", "4.9e-324", "2.2250738585072011e-308", "1e-400"]),
)


@st.composite
def polygon_texts(draw: st.DrawFn) -> str:
    """Polygons of 3 or more x, y pairs, spaced oddly."""
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        tokens = draw(st.lists(numbers, min_size=3, max_size=6).map(lambda xs: xs * 2))
        parts.append("[" + ",".join(draw(spaces) + t + draw(spaces) for t in tokens) + "]")
    return draw(spaces) + "[" + ",".join(draw(spaces) + p + draw(spaces) for p in parts) + "]" + draw(spaces)


@PROPERTY
@given(polygon_texts())
def test_polygon_points_are_the_floats_json_loads_reads(text: str) -> None:
    parts = [[float(v) for v in part] for part in json.loads(text)]
    rows = _scan([text.encode()])
    assert rows.kinds.tolist() == [kinds.POLYGONS]
    want = np.array([v for part in parts for v in part], dtype=np.float64)
    assert rows.points.view(np.int64).tolist() == want.view(np.int64).tolist()
    assert rows.part_lengths.tolist() == [len(part) for part in parts]
    assert rows.row_parts.tolist() == [len(parts)]


@pytest.mark.parametrize("number", ["1e400", "-1e309", str(10**400), "NaN", "-Infinity"])
def test_a_polygon_with_a_number_beyond_floats_is_not_one(number: str) -> None:
    rows = _scan([f"[[1, 2, 3, 4, {number}, 6], [1, 2, 3, 4, 5, 6]]".encode()])
    assert rows.kinds.tolist() == [kinds.BAD_POLYGONS] and len(rows.points) == 0


def _escaped(text: str, draw: st.DrawFn) -> str:
    """`text` as a JSON string with each character written plainly or escaped, as writers may."""
    written = []
    for char in text:
        plain = json.dumps(char, ensure_ascii=False)[1:-1]
        short = {"/": "\\/"}.get(char, plain)
        escaped = "".join(f"\\u{unit:04{draw(st.sampled_from('xX'))}}" for unit in _utf16(char))
        written.append(draw(st.sampled_from([plain, short, escaped])) if plain == char else plain)
    return '"' + "".join(written) + '"'


def _utf16(char: str) -> list[int]:
    data = char.encode("utf-16-be", "surrogatepass")
    return [int.from_bytes(data[k : k + 2], "big") for k in range(0, len(data), 2)]


@PROPERTY
@given(st.data(), st.text(max_size=30))
def test_a_counts_string_is_unescaped_as_json_loads_reads_it(data: st.DataObject, text: str) -> None:
    written = data.draw(st.sampled_from(["plain", "ascii", "mixed"]))
    if written == "mixed":
        string = _escaped(text, data.draw)
    else:
        string = json.dumps(text, ensure_ascii=written == "ascii")
    value = '{"size": [3, 4], "counts": ' + string + "}"
    try:
        encoded = value.encode()
    except UnicodeEncodeError:  # a lone surrogate has no UTF-8: no file holds it unescaped
        return
    rows = _scan([encoded])
    assert rows.kinds.tolist() == [kinds.RLE_STRING]
    assert rows.sizes.tolist() == [[3, 4]]
    assert rows.strings.tobytes() == json.loads(value)["counts"].encode("ascii", "replace")


def _kind(value: Any, sized: bool) -> int:
    """A row's kind from its parsed value: the rules the kernel applies to the text."""
    if isinstance(value, list) and value:
        good = all(
            type(part) is list
            and len(part) >= 6
            and len(part) % 2 == 0
            and all(type(c) in (int, float) and abs(c) < 2**1024 and math.isfinite(c) for c in part)
            for part in value
        )
        return (kinds.POLYGONS if sized else kinds.NO_SIZE) if good else kinds.BAD_POLYGONS
    if not (isinstance(value, dict) and value):
        return kinds.NO_MASK
    size, counts = value.get("size"), value.get("counts")
    if not (
        isinstance(size, list) and len(size) == 2 and all(type(s) is int and 0 < s < 2**63 for s in size)
    ):
        return kinds.BAD_RLE
    if isinstance(counts, str):
        return kinds.RLE_STRING
    if isinstance(counts, list) and all(type(c) is int for c in counts):
        return kinds.RUNS_OUT_OF_RANGE if any(not 0 <= c < 2**32 for c in counts) else kinds.RLE_RUNS
    return kinds.BAD_RLE


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.text(max_size=5),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=7) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=14,
)
segmentations = st.one_of(
    values,
    st.lists(st.lists(st.integers(-5, 50) | st.floats(-5, 50) | values, max_size=8), max_size=3),
    st.fixed_dictionaries(
        {
            "size": st.lists(st.integers(-1, 2**64), max_size=3) | values,
            "counts": st.lists(st.integers(-2, 2**33), max_size=4) | st.text(max_size=6) | values,
        },
        optional={"other": values},
    ),
)


@PROPERTY
@given(st.lists(segmentations, min_size=1, max_size=6), st.booleans(), st.booleans())
def test_each_row_s_kind_is_that_of_its_parsed_value(rows: list[Any], sized: bool, spaced: bool) -> None:
    texts = [json.dumps(v, indent=1 if spaced else None).encode() for v in rows]
    scan = _scan(texts, sized)
    assert scan.kinds.tolist() == [_kind(json.loads(t), sized) for t in texts]
    listed = [
        json.loads(t)["counts"] for t, kind in zip(texts, scan.kinds, strict=True) if kind == kinds.RLE_RUNS
    ]
    assert scan.runs.tolist() == [c for counts in listed for c in counts]
    assert scan.run_lengths[scan.kinds == kinds.RLE_RUNS].tolist() == [len(c) for c in listed]


def test_the_last_of_a_key_written_twice_is_read_as_json_loads_keeps_it() -> None:
    rows = _scan(
        [
            b'{"counts": [1, 2], "size": [1, 3], "counts": "3", "\\u0073ize": [2, 5]}',
            b'{"size": [1, 1], "counts": "1", "size": [0, 1]}',
        ]
    )
    assert rows.kinds.tolist() == [kinds.RLE_STRING, kinds.BAD_RLE]
    assert rows.sizes.tolist() == [[2, 5], [0, 0]]
    assert rows.strings.tobytes() == b"3" and len(rows.runs) == 0


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=200), st.lists(st.integers(0, 200), max_size=8))
def test_any_bytes_are_read_without_a_crash(text: bytes, cuts: list[int]) -> None:
    bounds = np.array(sorted({0, len(text), *(min(c, len(text)) for c in cuts)}), dtype=np.int64)
    size = np.full(len(bounds) - 1, 7.0)
    rows = scanned(text, bounds[:-1], bounds[1:], size, size.copy())
    assert set(rows.kinds.tolist()) <= set(range(8))
    assert len(rows.points) == rows.part_lengths.sum() and len(rows.strings) == rows.string_lengths.sum()


def test_rows_outside_the_text_are_refused() -> None:
    with pytest.raises(ValueError, match="within the text"):
        scanned(b"[]", np.array([0]), np.array([3]), np.ones(1), np.ones(1))


@settings(max_examples=200, deadline=None)
@example(b"," * 1000 + b"[" * 600, 0, 1600)  # more than an 8-bit count in every block
@given(
    st.binary(max_size=1200).map(lambda b: b.replace(b"\x00", b",")),
    st.integers(0, 1200),
    st.integers(0, 1200),
)
def test_the_rooms_count_the_commas_and_brackets_of_the_rows_span(text: bytes, first: int, last: int) -> None:
    first, last = sorted((min(first, len(text)), min(last, len(text))))
    lists = text.count(b"[", first, last)
    numbers = text.count(b",", first, last) + lists
    chars = np.frombuffer(text, dtype=np.uint8)
    assert segmentation_text._rooms(chars, first, last).tolist() == [numbers, lists, last - first, numbers]
