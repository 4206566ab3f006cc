"""COCO fast paths read exactly as plain parsing: results lists (and an instances file's
annotations) read in pieces that each reader cuts on its own, from memory (`jsondoc.LoadedArray`)
or streamed from the file (`jsondoc.StreamedArray`), by the records kernel or, for a piece it
refuses, decoded loosely (`cocojson`)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from msgspec.structs import replace

from handler.boxes import Dataset, ParsedRows
from handler.datasets import coco, jsondoc, load_dataset
from handler.datasets.coco import read_coco_instances, read_coco_results
from handler.datasets.cocojson import LooseEntry, decode_entries
from handler.datasets.ids import DatasetIds
from handler.datasets.jsondoc import LoadedArray, StreamedArray, streamed_array
from handler.datasets.reading import parse_document
from handler.errors import DatasetError
from handler.kernels.json_records import Records, records
from handler.storage.registry import open_source

IMAGES = [{"id": i, "file_name": f"{i}.jpg", "width": 640, "height": 480} for i in (1, 2, 7, 10**7)]
CATEGORIES = [{"id": 1, "name": "car"}, {"id": 3, "name": "bus"}]


# The local processes the readings of the test under way may use (the fixture below sets it).
WORKERS = {"count": 1}

# Boxes need no image sizes (only polygons do).
NO_SIZES = coco._Sizes(np.empty(0), np.empty(0))


def _annotations() -> list[dict[str, Any]]:
    return [
        {
            "id": k,
            "image_id": image["id"],
            "category_id": (1, 3)[k % 2],
            "bbox": [10.0 * k, 5, 20, 30],
            "area": 600.0,
            "segmentation": [[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]],
            "iscrowd": int(k == 3),
        }
        for k, image in enumerate(IMAGES * 3, start=1)
    ]


def _gt(tmp_path: Path, annotations: list[dict[str, Any]] | None = None) -> Path:
    path = tmp_path / "gt.json"
    document = {
        "info": {},
        "images": IMAGES,
        "categories": CATEGORIES,
        "annotations": annotations or _annotations(),
    }
    path.write_text(json.dumps(document))
    return path


def _results(n: int) -> list[dict[str, Any]]:
    ids = [image["id"] for image in IMAGES]
    return [
        {
            "image_id": ids[k % len(ids)],
            "category_id": (1, 3)[k % 2],
            "bbox": [k % 50, 2.5, 10 + k % 7, 20],
            "score": (k % 100) / 100,
        }
        for k in range(n)
    ]


def _read(tmp_path: Path, results: list[Any] | str, indent: int | None = None) -> Dataset:
    gt = load_dataset(open_source(str(_gt(tmp_path))))
    path = tmp_path / "results.json"
    path.write_text(results if isinstance(results, str) else json.dumps(results, indent=indent))
    source = open_source(str(path))
    assert isinstance(parse_document(source, source.read_bytes(), WORKERS["count"]), jsondoc.LoadedArray)
    return load_dataset(source, None, gt, workers=WORKERS["count"]).dataset


def _whole(tmp_path: Path, results: list[Any]) -> Dataset:
    """The same list read from an already parsed document (no chunking)."""
    document = orjson.loads(json.dumps({"images": IMAGES, "categories": CATEGORIES, "annotations": []}))
    reference, ids = read_coco_instances("gt.json", document, "coco")
    return read_coco_results("results.json", results, "coco-results", reference, ids)


def _same(a: Dataset, b: Dataset) -> None:
    for column in ("xyxy", "class_id", "image", "confidence", "source_index"):
        np.testing.assert_array_equal(getattr(a.boxes, column), getattr(b.boxes, column))
    assert [s.position for s in a.skipped] == [s.position for s in b.skipped]
    assert [s.problem for s in a.skipped] == [s.problem for s in b.skipped]
    assert a.skipped_count == b.skipped_count


@pytest.fixture(autouse=True, params=[1, 2], ids=["serial", "parallel"])
def small_chunks(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[None]:
    """Every test twice: pieces decoded one after the other, and side by side on 2 threads
    (the same dataset, whatever the strings hold). Files of more than
    512 bytes are streamed; most pieces are read on past their first look ahead."""
    monkeypatch.setattr(jsondoc, "CHUNK_ROWS", 7)
    monkeypatch.setattr(jsondoc, "PIECE_BYTES", 500)
    monkeypatch.setattr(jsondoc, "LOOKAHEAD_BYTES", 16)
    monkeypatch.setattr(jsondoc, "_HEAD_BYTES", 256)
    monkeypatch.setattr(jsondoc, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setitem(WORKERS, "count", request.param)
    yield


@pytest.mark.parametrize("indent", [None, 2])
def test_chunks_read_as_the_whole_list(tmp_path: Path, indent: int | None) -> None:
    results = _results(500)
    read = _read(tmp_path, results, indent)
    assert len(read.boxes) == 500
    _same(read, _whole(tmp_path, results))


def test_braces_and_commas_inside_strings_and_nested_values(tmp_path: Path) -> None:
    results = _results(300)
    for k in range(1, 300, 3):
        results[k]["note"] = '"}, {"image_id": 1},'
        results[k]["extra"] = [{"a": 1}, {"b": {"c": 2}}, {}]
    _same(_read(tmp_path, results), _whole(tmp_path, results))


def test_odd_entries_fall_back_to_plain_values_with_their_own_positions(tmp_path: Path) -> None:
    results = _results(300)
    results[17]["score"] = "high"
    results[120]["bbox"] = [1, 2, 3]
    results[121]["bbox"] = ["1", 2, 3, 4]
    results[122]["image_id"] = 99
    results[123]["image_id"] = True
    results[124]["image_id"] = "7"  # the text of a known id: COCO ids are compared as text
    results[125]["category_id"] = 2.0
    results[200]["iscrowd"] = 1
    read = _read(tmp_path, results)
    _same(read, _whole(tmp_path, results))
    positions = [s.position for s in read.skipped]
    assert positions == [f"annotations[{k}]" for k in (17, 120, 121, 122, 123, 125)]
    assert 124 in read.boxes.source_index and 200 not in read.boxes.source_index


def test_entries_are_read_in_the_tightest_shape_they_all_fit() -> None:
    """The kernel reads the usual shape; what it refuses is decoded loosely, else plainly."""

    def shape(text: str) -> type:
        if isinstance(records(text.encode()), Records):
            return Records
        entries = decode_entries(text.encode())
        assert entries is not None
        return {type(e) for e in entries}.pop()

    usual = '{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4]}'
    assert shape(f"[{usual}, {usual}]") is Records
    crowd = '{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "iscrowd": 0}'
    assert shape(f"[{usual}, {crowd}]") is Records
    assert shape(f'[{usual}, {{"image_id": "a", "category_id": 2, "bbox": [1]}}]') is LooseEntry
    assert shape(f'[{usual}, {{"image_id": 1, "category_id": 2, "bbox": [], "score": null}}]') is dict


@pytest.mark.parametrize(
    "odd",
    [
        {"image_id": "7"},  # text ids: decoded loosely
        {"bbox": [1, 2, 3]},  # a box of another length: decoded loosely
        {"iscrowd": True},
        {"iscrowd": 2},
        {"image_id": 2**63 + 1},  # beyond int64: typed, but read as any other value
        {"category_id": 2**64},
        {"image_id": -(2**63)},
    ],
)
def test_each_shape_of_entry_reads_as_the_plain_values(tmp_path: Path, odd: dict[str, Any]) -> None:
    """Usual entries, loose ones and plain JSON values give the same rows."""
    results = _results(300)
    for k in range(5, 300, 40):
        results[k].update(odd)
    read = _read(tmp_path, results)
    _same(read, _whole(tmp_path, results))
    if "image_id" in odd and odd["image_id"] != "7":
        assert read.skipped[0].problem == f"image_id {odd['image_id']} is not in the images"


@pytest.mark.parametrize("key", ['"iscrowd"', '"iscro\\u0077d"'])
def test_crowd_flags_are_read_however_the_key_is_spelled(tmp_path: Path, key: str) -> None:
    results = _results(300)
    for k in range(3, 300, 50):
        results[k]["iscrowd"] = 1
    text = json.dumps(results).replace('"iscrowd"', key)
    read = _read(tmp_path, text)
    _same(read, _whole(tmp_path, results))
    assert len(read.boxes) == 300 - 6


def test_a_syntax_error_names_its_line_and_column(tmp_path: Path) -> None:
    text = json.dumps(_results(200), indent=1)
    broken = text[: len(text) // 2] + "@" + text[len(text) // 2 :]
    with pytest.raises(orjson.JSONDecodeError) as parsed:
        orjson.loads(broken)
    with pytest.raises(DatasetError, match=f"line {parsed.value.lineno} column {parsed.value.colno}"):
        _read(tmp_path, broken)


def test_a_trailing_comma_is_not_json(tmp_path: Path) -> None:
    text = json.dumps(_results(50))
    with pytest.raises(DatasetError, match="expected valid JSON"):
        _read(tmp_path, text[:-1] + ",]")


def test_integer_ids_beyond_the_table_and_text_ids() -> None:
    ids = DatasetIds(["5", "-3", str(10**9), "abc", "007"], ["1"])
    values: list[Any] = [5, -3, 10**9, 6, 7, 10**30]
    assert ids.image_index.lookup(values).tolist() == [0, 1, 2, -1, -1, -1]
    assert ids.image_index.lookup(["abc", "007", 5]).tolist() == [3, 4, 0]


def _instances_both_ways(path: Path) -> tuple[Any, Dataset, Dataset]:
    source = open_source(str(path))
    content = source.read_bytes()
    fast = parse_document(source, content, WORKERS["count"])
    read_fast, _ = read_coco_instances("gt.json", fast, "coco")
    read_plain, _ = read_coco_instances("gt.json", orjson.loads(content), "coco")
    return fast, read_fast, read_plain


def test_instances_with_annotations_read_in_pieces_read_as_parsed_plainly(tmp_path: Path) -> None:
    fast, read_fast, read_plain = _instances_both_ways(_gt(tmp_path))
    assert isinstance(fast["annotations"], LoadedArray)
    _same(read_fast, read_plain)
    assert read_fast.crowd_excluded == read_plain.crowd_excluded == 1
    assert read_fast.asset_ids == read_plain.asset_ids and read_fast.class_names == read_plain.class_names


def test_an_odd_annotation_sends_its_piece_to_the_plain_parser(tmp_path: Path) -> None:
    annotations = _annotations()
    annotations[4]["bbox"] = "x"
    annotations[5]["score"] = None
    fast, read_fast, read_plain = _instances_both_ways(_gt(tmp_path, annotations))
    assert isinstance(fast["annotations"], LoadedArray)
    _same(read_fast, read_plain)
    assert [s.position for s in read_fast.skipped] == ["annotations[4]", "annotations[5]"]


def _results_file(tmp_path: Path, results: list[Any]) -> tuple[DatasetIds, LoadedArray, StreamedArray]:
    document = orjson.loads(json.dumps({"images": IMAGES, "categories": CATEGORIES, "annotations": []}))
    _, ids = read_coco_instances("gt.json", document, "coco")
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    source = open_source(str(path))
    chunked = parse_document(source, source.read_bytes(), WORKERS["count"])
    streamed = streamed_array(source, coco.RESULT_KEYS, 0, WORKERS["count"])
    assert isinstance(chunked, LoadedArray) and streamed is not None
    assert (streamed.first, streamed.start, streamed.stop) == (chunked.first, chunked.start, chunked.stop)
    assert len(streamed.nominal_pieces()) > 10
    return ids, chunked, streamed


def _parallel_and_serial(tmp_path: Path, results: list[Any]) -> tuple[list[ParsedRows | None], ParsedRows]:
    """The rows of `results` decoded in pieces side by side from memory and streamed from the
    file (None: fell back), and from the plain values of the whole list."""
    ids, chunked, streamed = _results_file(tmp_path, results)
    two = [replace(chunked, workers=2), replace(streamed, workers=2)]
    parallel = [coco._pieces_rows(document, ids, NO_SIZES) for document in two]
    return parallel, coco._results_rows("results.json", chunked.whole(), ids, NO_SIZES)


def _same_rows(a: ParsedRows, b: ParsedRows) -> None:
    for column in ("xyxy", "class_id", "image", "source_index", "confidence", "has_confidence", "crowd"):
        np.testing.assert_array_equal(getattr(a, column), getattr(b, column))
    assert (a.rejected, a.reasons) == (b.rejected, b.reasons)


def test_clean_pieces_are_decoded_side_by_side(tmp_path: Path) -> None:
    results = _results(400)
    results[33]["image_id"] = 999_999  # rejected rows keep their place in the whole list
    results[250]["category_id"] = 999_999
    parallel, serial = _parallel_and_serial(tmp_path, results)
    for rows in parallel:
        assert rows is not None and len(rows.image) == 400
        _same_rows(rows, serial)
        assert sorted(rows.rejected) == [33, 250]


@pytest.mark.parametrize(
    "hostile",
    [
        '}, {"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 0.5}, {"x": "',
        '\\"}, {\\"image_id\\": 7}, \\\\',
        "},{" * 40,
        '} , {"score": 1} ] , [',
    ],
)
def test_a_cut_inside_a_string_never_reads_a_different_list(tmp_path: Path, hostile: str) -> None:
    """A piece cut inside a string is not valid JSON, so the read falls back to the plain
    values: the pieces' rows are None or exactly the plain ones, never other rows."""
    results = _results(300)
    for k in range(1, 300, 2):  # not the first: it says whether the list is read in pieces
        results[k]["note"] = hostile
    parallel, serial = _parallel_and_serial(tmp_path, results)
    for rows in parallel:
        if rows is not None:
            _same_rows(rows, serial)
    _same(_read(tmp_path, results), _whole(tmp_path, results))


def test_a_results_object_on_s3_is_streamed_in_ranged_reads(
    tmp_path: Path, s3_bucket: str, s3_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers read their pieces with ranged GETs on clients of their own: the same dataset (in
    about 8 pieces: each GET is a request to the server, the cuts are tested above)."""
    monkeypatch.setattr(jsondoc, "PIECE_BYTES", 4000)
    results = _results(400)
    results[77]["image_id"] = 999_999
    s3_client.put_object(Bucket=s3_bucket, Key="results.json", Body=json.dumps(results).encode())
    source = open_source(f"s3://{s3_bucket}/results.json")
    streamed = streamed_array(source, coco.RESULT_KEYS, 0, WORKERS["count"])
    gt = load_dataset(open_source(str(_gt(tmp_path))))
    assert streamed is not None and gt.ids is not None
    assert coco._pieces_rows(replace(streamed, workers=2), gt.ids, NO_SIZES) is not None
    _same(load_dataset(source, None, gt, workers=WORKERS["count"]).dataset, _read(tmp_path, results))


@pytest.mark.parametrize("note", ["},{" * 60, "}, {" * 400])
def test_a_piece_bound_inside_a_string_falls_back_to_the_plain_reading(tmp_path: Path, note: str) -> None:
    """Strings of `},{` longer than a third of a piece (or than a piece) in every element: some
    piece's cut lies inside a string, so no reading in pieces is taken; the plain one is."""
    results = _results(60)
    for result in results[1:]:
        result["note"] = note
    parallel, _ = _parallel_and_serial(tmp_path, results)
    assert parallel == [None, None]
    _same(_read(tmp_path, results), _whole(tmp_path, results))


def test_a_file_rewritten_while_it_is_streamed_is_not_read_in_pieces(tmp_path: Path) -> None:
    ids, _, streamed = _results_file(tmp_path, _results(300))
    (tmp_path / "results.json").write_text(json.dumps(_results(301)[1:]))
    assert coco._pieces_rows(streamed, ids, NO_SIZES) is None
    with pytest.raises(DatasetError, match=r"results\.json: changed while it was read"):
        streamed.loaded()


def test_an_instances_file_the_plain_parser_refuses_is_refused_as_it_says(tmp_path: Path) -> None:
    """The kernels read NaN, Infinity and a UTF-16 surrogate pair's escape; the plain parser
    does not take both in one file: its error, not a reading, is what the file gets."""
    annotations = _annotations()
    annotations[1]["segmentation"] = {"\U00010000": math.inf}
    path = _gt(tmp_path, annotations)  # json.dumps writes `{"\ud800\udc00": Infinity}`
    with pytest.raises(DatasetError, match="expected valid JSON"):
        load_dataset(open_source(str(path)), workers=WORKERS["count"])


@pytest.mark.parametrize("big_id", [2**31, -(2**31) - 1, 2**62])
def test_class_ids_as_written_beyond_32_bits_in_a_later_piece_are_kept_exactly(
    tmp_path: Path, big_id: int
) -> None:
    results = _results(60)
    results[-1]["category_id"] = big_id  # no category: skipped, its id kept for another reading
    read, whole = _read(tmp_path, results), _whole(tmp_path, results)
    for dataset in (read, whole):
        assert dataset.parsed is not None and dataset.parsed.rows.written_class is not None
        written = dataset.parsed.rows.written_class
        assert written.tolist() == [r["category_id"] for r in results]
        assert written.dtype == np.int64
    small = _read(tmp_path, _results(60)).parsed
    assert small is not None and small.rows.written_class is not None
    assert small.rows.written_class.dtype == np.int32  # the ids fit: half the column


def test_score_flags_are_held_only_where_the_scores_do_not_imply_them(tmp_path: Path) -> None:
    scored = _read(tmp_path, _results(30)).parsed  # every row scored
    assert scored is not None and scored.rows.has_confidence is None and scored.rows.crowd is None
    text = json.dumps(_results(30)).replace('"score": 0.29', '"score": NaN')  # written, not a number
    read = _read(tmp_path, text)
    assert read.parsed is not None and read.parsed.rows.has_confidence is not None
    assert read.skip_reasons == {"confidence not finite": 1}
