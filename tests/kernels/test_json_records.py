"""The records kernel (`handler/kernels/json_records.py`) against its oracle, `json.loads`: on
drawn arrays of records (keys in any order, some spelled with \\u escapes, odd spacing, numbers
in every spelling, nested values to skip) it reads the float64 bits `json.loads` gives; on any
text it reads, it reads what `json.loads` reads, and it refuses the rest, never reading outside
the text."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handler.kernels.json_records import (
    HAS_CROWD,
    HAS_SCORE,
    HAS_SEGMENTATION,
    Records,
    Refused,
    joined_spans,
    members,
    records,
)

_SPACE = st.text(alphabet=" \t\r\n", max_size=2)
_INT64 = st.integers(-(2**63), 2**63 - 1)


def _spelled_float(value: float, spelling: int) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return (
            ("Infinity", "1e309", "1E+400")[spelling % 3]
            if value > 0
            else ("-Infinity", "-1e309")[spelling % 2]
        )
    texts = (repr(value), f"{value:.17e}", f"{value:.17g}", f"{value:.3e}", f"{value:.20f}", f"{value:E}")
    text = texts[spelling % len(texts)]
    return text if text[-1].isdigit() else repr(value)


_FLOAT_TOKENS = st.tuples(st.floats(), st.integers(0, 5)).map(lambda drawn: _spelled_float(*drawn))
_NUMBER_TOKENS = st.one_of(
    _FLOAT_TOKENS,
    st.integers(-(10**30), 10**30).map(str),  # integers, beyond int64 too
    st.sampled_from(["-0", "0", "-0.0", "0e0", "-0E-5", "1e-400", "4.9e-324", "2.2250738585072011e-308"]),
    st.decimals(allow_nan=False, allow_infinity=False, places=20).map(str),
)
# JSON values to skip: nested arrays and objects, strings with escapes and any character.
# (Not beyond the BMP: escaped, a character there is a surrogate pair, which the kernel refuses.)
_STRINGS = st.text(st.characters(max_codepoint=0xFFFF, exclude_categories=["Cs"])).map(
    lambda text: json.dumps(text, ensure_ascii=bool(len(text) % 2))
)
_SKIPPED = st.recursive(
    st.one_of(_STRINGS, _NUMBER_TOKENS, st.sampled_from(["true", "false", "null"])),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda items: "[" + " , ".join(items) + "]"),
        st.lists(st.tuples(_STRINGS, inner), max_size=3).map(
            lambda pairs: "{" + ",".join(f"{k}:{v}" for k, v in pairs) + "}"
        ),
    ),
    max_leaves=8,
)


@st.composite
def _key(draw: st.DrawFn, name: str) -> str:
    """A key, some of its characters written as \\u escapes."""
    escaped = draw(st.lists(st.booleans(), min_size=len(name), max_size=len(name)))
    return '"' + "".join(f"\\u{ord(c):04x}" if e else c for c, e in zip(name, escaped, strict=True)) + '"'


@st.composite
def _record(draw: st.DrawFn) -> str:
    def member(name: str, value: str) -> str:
        return f"{draw(_key(name))}{draw(_SPACE)}:{draw(_SPACE)}{value}"

    box = f",{draw(_SPACE)}".join(draw(_NUMBER_TOKENS) for _ in range(4))
    fields = [member("image_id", str(draw(_INT64))), member("category_id", str(draw(_INT64)))]
    optional = [
        member("bbox", f"[{draw(_SPACE)}{box}{draw(_SPACE)}]"),
        member("score", draw(_NUMBER_TOKENS)),
        member("iscrowd", str(draw(st.integers(-3, 3)))),
        member("segmentation", draw(_SKIPPED)),
        member(draw(st.sampled_from(["area", "id", "note", "image_idx", "scor"])), draw(_SKIPPED)),
    ]
    fields += [f for f in optional if draw(st.booleans())]
    return "{" + draw(_SPACE) + f"{draw(_SPACE)},".join(draw(st.permutations(fields))) + draw(_SPACE) + "}"


def _bits(values: Any) -> list[int]:
    bits: list[int] = np.ascontiguousarray(values, dtype=np.float64).view(np.uint64).tolist()
    return bits


def _as_float(value: Any) -> float:
    return float(value)  # an integer as Python converts it: -0 is 0.0


def _expect_same(text: bytes, read: Records) -> None:
    """`read` holds what `json.loads` reads from `text`."""
    loaded = json.loads(text)
    assert len(read) == len(loaded)
    assert read.image_id.tolist() == [r["image_id"] for r in loaded]
    assert read.category_id.tolist() == [r["category_id"] for r in loaded]
    boxes = [[_as_float(v) for v in r["bbox"]] if "bbox" in r else [math.nan] * 4 for r in loaded]
    assert _bits(read.xywh) == _bits(np.array(boxes, dtype=np.float64).reshape(-1, 4))
    assert _bits(read.score) == _bits([_as_float(r.get("score", math.nan)) for r in loaded])
    assert read.iscrowd.tolist() == [r.get("iscrowd", 0) for r in loaded]
    assert ((read.written & HAS_SCORE) != 0).tolist() == ["score" in r for r in loaded]
    assert ((read.written & HAS_CROWD) != 0).tolist() == ["iscrowd" in r for r in loaded]
    assert ((read.written & HAS_SEGMENTATION) != 0).tolist() == ["segmentation" in r for r in loaded]
    for row, record in enumerate(loaded):
        if "segmentation" in record:
            start, end = read.segmentation[row].tolist()
            assert json.dumps(json.loads(text[start:end])) == json.dumps(record["segmentation"])


@settings(max_examples=100, deadline=None)
@given(st.lists(_record(), max_size=12), _SPACE, _SPACE)
def test_records_read_the_bits_json_loads_gives(drawn: list[str], before: str, after: str) -> None:
    text = f"{before}[{before}{f'{after},{before}'.join(drawn)}{after}]{after}".encode()
    read = records(text)
    assert isinstance(read, Records), text
    _expect_same(text, read)


@settings(max_examples=100, deadline=None)
@given(st.lists(_record(), min_size=1, max_size=4), st.data())
def test_any_text_the_kernel_reads_is_read_as_json_loads_reads_it(
    drawn: list[str], data: st.DataObject
) -> None:
    """A drawn text cut short, with bytes changed or inserted (hostile input): refused, or read
    exactly as `json.loads` reads it."""
    text = bytearray(f"[{','.join(drawn)}]".encode())
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(text)))
        byte = data.draw(st.sampled_from([*b'"\\{}[],:0-.eE \x00\x1f\x80\xc3\xed\xff', *range(256)]))
        match data.draw(st.sampled_from(["set", "insert", "cut"])):
            case "set" if at < len(text):
                text[at] = byte
            case "insert":
                text.insert(at, byte)
            case _:
                del text[at:]
    read = records(bytes(text))
    if isinstance(read, Refused):
        return
    _expect_same(bytes(text), read)


@pytest.mark.parametrize(
    ("text", "refused_at"),
    [
        (b'[{"image_id": "1", "category_id": 2}]', 0),  # a text id: the loose path's
        (b'[{"image_id": 1, "category_id": 2}, {"image_id": 1.0, "category_id": 2}]', 1),
        (b'[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3]}]', 0),
        (b'[{"image_id": 1, "category_id": 2, "bbox": null}]', 0),
        (b'[{"image_id": 1, "category_id": 2, "score": null}]', 0),
        (b'[{"image_id": 1, "category_id": 2, "iscrowd": true}]', 0),
        (b'[{"image_id": 9223372036854775808, "category_id": 2}]', 0),  # beyond int64
        (b'[{"image_id": 1}]', 0),
        (b'[{"image_id": 1, "category_id": 2, "note": "\\ud800"}]', 0),  # a lone surrogate
        (b'[{"image_id": 1, "category_id": 2, "note": "\\ud83d\\ude00"}]', 0),  # a pair: the loose path's
        (b'[{"image_id": 1, "category_id": 2, "note": "\xed\xa0\x80"}]', 0),  # one in UTF-8
        (b'[{"image_id": 1, "category_id": 2, "x": ' + b"[" * 100 + b"]" * 100 + b"}]", 0),  # too deep
        (
            b'[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 1' + b"0" * 400 + b"]}]",
            0,
        ),  # an int float() refuses
        (b'[{"image_id": 1, "category_id": 2},]', 1),  # a trailing comma
        (b'[{"image_id": 1, "category_id": 2}] x', 1),
        (b"[1]", 0),
        (b"", 0),
    ],
)
def test_what_the_kernel_refuses_it_says_where(text: bytes, refused_at: int) -> None:
    assert records(text) == Refused(refused_at)


def test_members_give_each_key_and_value_by_its_bounds() -> None:
    text = b' {"images": [1, {"a": "}"}], "annotations" :[] ,"info":{}} \n'
    found = [(text[key], text[value]) for key, value in members(text) or []]
    assert found == [(b'"images"', b'[1, {"a": "}"}]'), (b'"annotations"', b"[]"), (b'"info"', b"{}")]
    assert members(b'{"a": 1,}') is None
    assert members(b"[]") is None
    assert members(b'{"a": 1} {}') is None


def test_joined_spans_take_only_values_within_the_text() -> None:
    """A span that is not a value inside the text (none, beyond it, empty) is written `null`."""
    text = b'[{"segmentation": [1, 2]}]'
    bounds = np.array([[18, 24], [-1, -1], [5, 1000], [3, 3], [24, 18]], dtype=np.int64)
    joined, placed = joined_spans(text, bounds)
    assert joined == b"[1, 2]" + b"null" * 4
    assert placed.tolist() == [[0, 6], [6, 10], [10, 14], [14, 18], [18, 22]]
