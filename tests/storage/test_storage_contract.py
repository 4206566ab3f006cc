"""One storage contract, run against the local folder store, the S3 store (moto over HTTP) and
`flat://`, a throwaway backend registered from the test (tests/helpers/flat_store.py): what a
new backend needs to pass.

First the primitives (put/get/open/exists/delete/list, in the style of fsspec's abstract
tests), then the report publish built on them, ledger chunks written by other processes
included, then dataset sources. Then the S3 faults the platform meets: a missing bucket, wrong
credentials, the endpoint down, an endpoint answering 500 for a while (retries succeed) or for
good mid-upload (nothing visible). Every failure must be one StorageError line naming the
object, what was tried and why.
"""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import stat
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest
from helpers.flat_store import SCHEME as FLAT_SCHEME
from helpers.reports import publish_report
from helpers.s3_server import FaultProxy
from msgspec.structs import replace

from handler.cli import main as cli_main
from handler.errors import StorageError
from handler.forked import forked_map
from handler.report.finishers import REPORT_PARTS
from handler.report.publish import staged_report
from handler.report.publish.asset import (
    SAFE_AGE_SECONDS,
    collect_garbage,
    list_reports,
    read_report_part,
    report_location,
)
from handler.storage import ObjectNotFound, ObjectSink, Store, WrittenObject, open_store, resolve_dataset
from handler.storage.local import LocalStore
from handler.storage.registry import BACKENDS
from handler.storage.s3 import DEFAULT_MAX_ATTEMPTS, S3Store, max_attempts

PREFIX = "store"
PARTS = {"findings": b'{"score": 0.5, "name": "\xc3\xa9"}', "html": b"<!doctype html><p>r\xc3\xa9port</p>"}
MANIFEST_OF_PARTS = {"report_id": "r1", "parts": ["findings.json", "report.html"]}
PUBLISHED = {REPORT_PARTS[key]: content for key, content in PARTS.items()}  # as staging takes them
INVALID_IDS = ["../x", "/abs", "a/b", "", ".hidden", "a b", "x/../../y", "é"]


@dataclass
class Backend:
    """A store plus raw access to what lies under it, to seed datasets and inspect reports."""

    store: Store
    put: Callable[[str, bytes], None]  # store-relative key -> content
    keys: Callable[[], list[str]]  # every store-relative key
    reference: Callable[[str], str]  # store-relative key -> a dataset reference (path or URI)
    read_raw: Callable[[str], bytes]


def local_backend(root: Path) -> Backend:
    def put(key: str, content: bytes) -> None:
        (root / key).parent.mkdir(parents=True, exist_ok=True)
        (root / key).write_bytes(content)

    def keys() -> list[str]:
        return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())

    return Backend(
        LocalStore(root), put, keys, lambda key: str(root / key), lambda key: (root / key).read_bytes()
    )


def s3_backend(bucket: str, client: Any) -> Backend:
    def put(key: str, content: bytes) -> None:
        client.put_object(Bucket=bucket, Key=f"{PREFIX}/{key}", Body=content)

    def keys() -> list[str]:
        pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"{PREFIX}/")
        found = [entry["Key"] for page in pages for entry in page.get("Contents", [])]
        return sorted(key.removeprefix(f"{PREFIX}/") for key in found)

    def read_raw(key: str) -> bytes:
        return bytes(client.get_object(Bucket=bucket, Key=f"{PREFIX}/{key}")["Body"].read())

    return Backend(
        S3Store.from_uri(f"s3://{bucket}/{PREFIX}"),
        put,
        keys,
        lambda key: f"s3://{bucket}/{PREFIX}/{key}",
        read_raw,
    )


def flat_backend(root: Path, monkeypatch: pytest.MonkeyPatch) -> Backend:
    """The throwaway backend, registered the one way a backend is: its scheme in BACKENDS."""
    monkeypatch.setitem(BACKENDS, FLAT_SCHEME, "helpers.flat_store:FlatStore")

    def put(key: str, content: bytes) -> None:
        root.mkdir(parents=True, exist_ok=True)
        (root / quote(key, safe="")).write_bytes(content)

    def keys() -> list[str]:
        return sorted(unquote(p.name) for p in root.iterdir()) if root.exists() else []

    return Backend(
        open_store(f"{FLAT_SCHEME}://{root}"),
        put,
        keys,
        lambda key: f"{FLAT_SCHEME}://{root}#{key}",
        lambda key: (root / quote(key, safe="")).read_bytes(),
    )


@pytest.fixture(params=["local", "s3", "flat"])
def backend(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Backend:
    if request.param == "local":
        return local_backend(tmp_path / "store")
    if request.param == "flat":
        return flat_backend(tmp_path / "flat", monkeypatch)
    return s3_backend(request.getfixturevalue("s3_bucket"), request.getfixturevalue("s3_client"))


def names(sources: list[Any]) -> list[str]:
    return [source.basename for source in sources]


class TestPrimitives:
    def test_put_then_get(self, backend: Backend) -> None:
        backend.store.put("a/b é.bin", b"\x00\xffbytes", "application/octet-stream")
        assert backend.store.get("a/b é.bin") == b"\x00\xffbytes"
        assert backend.read_raw("a/b é.bin") == b"\x00\xffbytes"

    def test_put_from_chunks_is_one_object(self, backend: Backend) -> None:
        chunks = (f"line {i}\n".encode() for i in range(1000))
        backend.store.put("lines.txt", chunks, "text/plain")
        assert backend.store.get("lines.txt") == b"".join(f"line {i}\n".encode() for i in range(1000))
        assert backend.keys() == ["lines.txt"]

    def test_put_replaces_whole(self, backend: Backend) -> None:
        backend.store.put("k", b"a long first version", "text/plain")
        backend.store.put("k", iter([b"new"]), "text/plain")
        assert backend.store.get("k") == b"new"

    def test_empty_object(self, backend: Backend) -> None:
        backend.store.put("empty", iter([]), "text/plain")
        assert backend.store.exists("empty") and backend.store.get("empty") == b""

    def test_get_missing_is_object_not_found(self, backend: Backend) -> None:
        with pytest.raises(ObjectNotFound, match="no such") as error:
            backend.store.get("nope/x.json")
        assert "nope/x.json" in str(error.value) and isinstance(error.value, FileNotFoundError)

    def test_exists(self, backend: Backend) -> None:
        backend.put("dir/file", b"x")
        assert backend.store.exists("dir/file")
        assert not backend.store.exists("dir/other")
        assert not backend.store.exists("never/there")

    def test_list_is_recursive_relative_and_in_path_order(self, backend: Backend) -> None:
        keys = ["a b/x", "a/b", "a-c", "a.d", "a/z/deep/er", "B", "_"]
        for key in keys:
            backend.put(f"top/{key}", b"")
        backend.put("topless", b"")
        assert backend.store.list("top") == sorted((f"top/{k}" for k in keys), key=lambda k: k.split("/"))
        assert backend.store.list("top/") == backend.store.list("top")
        assert backend.store.list("top/a") == ["top/a/b", "top/a/z/deep/er"]  # not a-c, not a.d
        assert backend.store.list("nothing") == []

    def test_delete_in_order_absent_keys_are_fine(self, backend: Backend) -> None:
        for key in ("r/x/1", "r/x/2", "r/keep"):
            backend.put(key, b"x")
        backend.store.delete(["r/x/2", "r/x/1", "r/x/never"])
        assert backend.keys() == ["r/keep"]
        backend.store.delete(iter(["r/keep"]))
        assert backend.keys() == [] and backend.store.list("r") == []

    def test_delete_leaves_no_empty_folders(self, tmp_path: Path) -> None:
        store = LocalStore(tmp_path / "store")
        store.put("reports/r1/outcomes/00000.jsonl", b"{}", "application/x-ndjson")
        store.delete(["reports/r1/outcomes/00000.jsonl"])
        assert list((tmp_path / "store").iterdir()) == []  # like S3: a folder is its objects

    def test_open_streams(self, backend: Backend) -> None:
        lines = [f"{i:06d}\n".encode() for i in range(50_000)]
        backend.store.put("big.txt", lines, "text/plain")
        with backend.store.open("big.txt") as stream:
            assert stream.readline() == lines[0]
            assert stream.read(7) == lines[1]
            assert list(stream) == lines[2:]

    def test_url_names_the_object(self, backend: Backend) -> None:
        assert backend.store.url("reports/r1/") == f"{backend.store.uri.rstrip('/')}/reports/r1/"


def failing_after(chunks: int, error: BaseException) -> Iterator[bytes]:
    """A shard producer that breaks part-way (a shard that cannot be read, an interrupt)."""
    for index in range(chunks):
        yield f'{{"shard": {index}}}\n'.encode()
    raise error


class TestPublishContract:
    def test_report_parts_read_back(self, backend: Backend) -> None:
        publish_report(backend.store, "r1", PARTS)
        for key, content in PARTS.items():
            assert read_report_part(backend.store, "r1", REPORT_PARTS[key]) == content

    def test_every_declared_part_round_trips(self, backend: Backend) -> None:
        everything = {key: f"{key} é\n".encode() for key in REPORT_PARTS}
        publish_report(backend.store, "r2", everything)
        for key, content in everything.items():
            assert read_report_part(backend.store, "r2", REPORT_PARTS[key]) == content
        manifest = json.loads(backend.read_raw("reports/r2/manifest.json"))
        assert manifest == {"report_id": "r2", "parts": [REPORT_PARTS[key].name for key in everything]}

    def test_manifest_is_the_same_json_on_every_backend(self, backend: Backend) -> None:
        publish_report(backend.store, "r1", PARTS)
        assert json.loads(backend.read_raw("reports/r1/manifest.json")) == MANIFEST_OF_PARTS
        assert backend.keys() == [
            f"reports/r1/{name}" for name in ("findings.json", "manifest.json", "report.html")
        ]

    def test_chunked_part_reads_as_one(self, backend: Backend) -> None:
        shards = [b'{"a": 1}\n{"a": 2}\n', b"", b'{"a": "\xc3\xa9"}\n']
        publish_report(backend.store, "r1", PARTS, chunks=shards)
        assert read_report_part(backend.store, "r1", REPORT_PARTS["ledger"]) == b"".join(shards)
        chunks = [f"ledger/{i:05d}.npz" for i in range(3)]
        manifest = json.loads(backend.read_raw("reports/r1/manifest.json"))
        assert manifest["parts"] == [*chunks, *MANIFEST_OF_PARTS["parts"]]
        objects = [*manifest["parts"], "manifest.json"]
        assert backend.keys() == sorted(f"reports/r1/{name}" for name in objects)

    def test_a_part_may_stream(self, backend: Backend) -> None:
        publish_report(backend.store, "r1", {"outcomes": iter([b"1\n", b"2\n", b"3\n"])})
        assert read_report_part(backend.store, "r1", REPORT_PARTS["outcomes"]) == b"1\n2\n3\n"

    def test_empty_chunked_part_exists_and_is_empty(self, backend: Backend) -> None:
        publish_report(backend.store, "r1", {"findings": b"{}"}, chunks=[b""])
        assert read_report_part(backend.store, "r1", REPORT_PARTS["ledger"]) == b""

    def test_a_part_never_written_is_named(self, backend: Backend) -> None:
        publish_report(backend.store, "r1", PARTS)
        with pytest.raises(StorageError, match=r": report 'r1' has no outcomes$"):
            read_report_part(backend.store, "r1", REPORT_PARTS["outcomes"])

    def test_show_outcomes_prints_the_lines_of_a_report_from_before_the_ledger(
        self, backend: Backend, capsys: pytest.CaptureFixture[str]
    ) -> None:
        lines = [b'{"outcome": "correct"}\n', b'{"outcome": "false_negative"}\n']
        publish_report(backend.store, "r1", {**PARTS, "outcomes": b"".join(lines)})
        assert cli_main(["show", "r1", "--outcomes", "--store", backend.store.uri]) == 0
        assert capsys.readouterr().out.encode() == b"".join(lines)

    def test_report_without_manifest_is_absent(self, backend: Backend) -> None:
        for part in REPORT_PARTS.values():
            backend.put(f"reports/r9/{part.name}", b"left over by a failed run")
        with pytest.raises(StorageError, match=r": no report 'r9'$"):
            read_report_part(backend.store, "r9", REPORT_PARTS["html"])

    def test_unknown_report_is_absent(self, backend: Backend) -> None:
        with pytest.raises(StorageError, match=r": no report 'never-written'$"):
            read_report_part(backend.store, "never-written", REPORT_PARTS["findings"])

    def test_damaged_manifest(self, backend: Backend) -> None:
        backend.put("reports/r1/manifest.json", b"{not json")
        with pytest.raises(StorageError, match=r": report 'r1' has a damaged manifest$"):
            read_report_part(backend.store, "r1", REPORT_PARTS["findings"])

    @pytest.mark.parametrize("bad", INVALID_IDS)
    def test_invalid_ids_are_refused(self, backend: Backend, bad: str) -> None:
        expected = rf"^(report|dataset) id {bad!r} is not a valid id"
        with pytest.raises(StorageError, match=expected.replace(".", r"\.")):
            publish_report(backend.store, bad, PARTS)
        with pytest.raises(StorageError, match=expected.replace(".", r"\.")):
            read_report_part(backend.store, bad, REPORT_PARTS["html"])
        with pytest.raises(StorageError, match=expected.replace(".", r"\.")):
            backend.store.dataset(bad)
        assert backend.keys() == []

    def test_existing_report_is_not_overwritten(self, backend: Backend) -> None:
        publish_report(backend.store, "r1", PARTS)
        with pytest.raises(StorageError, match="report 'r1' already exists"):
            publish_report(backend.store, "r1", {"findings": b"{}", "html": b"other"})
        assert read_report_part(backend.store, "r1", REPORT_PARTS["html"]) == PARTS["html"]

    def test_unknown_part_writes_nothing(self, backend: Backend) -> None:
        with pytest.raises(KeyError):
            publish_report(backend.store, "r1", {"findings": b"{}", "unknown-part": b"x"})
        assert backend.keys() == []

    @pytest.mark.parametrize("error", [StorageError("shard 3: cannot be read"), KeyboardInterrupt()])
    def test_failure_mid_publish_leaves_nothing(self, backend: Backend, error: BaseException) -> None:
        parts = {**PARTS, "outcomes": failing_after(3, error)}
        with pytest.raises(type(error)) as raised:
            publish_report(backend.store, "r1", parts)
        if isinstance(error, StorageError):
            assert str(raised.value) == "cannot write report 'r1': shard 3: cannot be read"
        with pytest.raises(StorageError, match=r": no report 'r1'$"):
            read_report_part(backend.store, "r1", REPORT_PARTS["findings"])
        assert backend.keys() == []

    def test_location_names_the_report_folder(self, backend: Backend) -> None:
        assert report_location(backend.store, "r1") == f"{backend.store.uri.rstrip('/')}/reports/r1/"

    def test_list_and_show_latest(self, backend: Backend, capsys: pytest.CaptureFixture[str]) -> None:
        store = ["--store", backend.store.uri]
        assert cli_main(["show", "latest", *store]) == 2
        assert "no report yet" in capsys.readouterr().err
        ids = ["rpt_20261130T090000_0000aaaa", "rpt_20261201T080000_0000bbbb", "rpt_20261129T230000_0000cccc"]
        for report_id in ids:
            publish_report(backend.store, report_id, {**PARTS, "html": report_id.encode()})
        backend.put("reports/rpt_20261202T000000_0000dddd/report.html", b"no manifest: not a report")
        assert list_reports(backend.store) == sorted(ids, reverse=True)
        assert cli_main(["list", *store]) == 0
        listed = capsys.readouterr().out.splitlines()  # a line each: id first, then date, grade, score
        assert [line.split()[0] for line in listed] == sorted(ids, reverse=True)
        assert cli_main(["show", "latest", "--html", *store]) == 0
        assert capsys.readouterr().out == f"{ids[1]}\n"


def write_chunk(sink: ObjectSink, content: bytes) -> WrittenObject:
    """What a shard's worker does with its ledger chunk (run in a pool process)."""
    return sink.write(content)


def lines_of_shard(index: int) -> bytes:
    return b"".join(b'{"shard": %d, "line": %d}\n' % (index, line) for line in range(index * 50))


class TestChunksFromOtherProcesses:
    """Shard workers write ledger chunks from their own processes, reopening the store by URI."""

    def test_chunks_written_by_pool_processes_publish(self, backend: Backend) -> None:
        contents = [lines_of_shard(i) for i in range(4)]  # the first is empty
        with staged_report(backend.store, "r1") as staging:
            sinks = staging.ledger_sinks(len(contents))
            pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork"))
            with pool:
                written = list(pool.map(write_chunk, sinks, contents))
            assert [chunk.size for chunk in written] == [len(content) for content in contents]
            staging.publish(PUBLISHED, written)
        assert read_report_part(backend.store, "r1", REPORT_PARTS["ledger"]) == b"".join(contents)
        manifest = json.loads(backend.read_raw("reports/r1/manifest.json"))
        chunks = [f"ledger/{i:05d}.npz" for i in range(4)]
        assert manifest["parts"] == [*chunks, "findings.json", "report.html"]
        assert backend.keys() == sorted(
            f"reports/r1/{name}" for name in [*manifest["parts"], "manifest.json"]
        )

    def test_a_chunk_written_where_the_store_does_not_see_it_publishes_nothing(
        self, backend: Backend
    ) -> None:
        """A worker whose store URI reaches other objects: its chunk is reported, but absent."""
        elsewhere = f"{backend.store.uri}-elsewhere"
        with pytest.raises(StorageError) as raised, staged_report(backend.store, "r1") as staging:
            sinks = staging.ledger_sinks(2)
            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
                written = list(
                    pool.map(write_chunk, [sinks[0], replace(sinks[1], store_uri=elsewhere)], [b"a\n"] * 2)
                )
            staging.publish(PUBLISHED, written)
        message = str(raised.value)
        assert "\n" not in message and message.startswith("cannot write report 'r1': ")
        assert "ledger/00001.npz: expected 2 bytes as written, the store holds none" in message
        assert backend.keys() == []
        with pytest.raises(StorageError, match=r": no report 'r1'$"):
            read_report_part(backend.store, "r1", REPORT_PARTS["outcomes"])

    def test_a_chunk_of_another_size_publishes_nothing(self, backend: Backend) -> None:
        expected = r"expected 9 bytes as written, the store holds 3 bytes"
        with pytest.raises(StorageError, match=expected), staged_report(backend.store, "r1") as staging:
            (sink,) = staging.ledger_sinks(1)
            staging.publish(PUBLISHED, [replace(sink.write(b"ab\n"), size=9)])
        assert backend.keys() == []

    def test_a_shard_that_reported_nothing_publishes_nothing(self, backend: Backend) -> None:
        with (
            pytest.raises(
                StorageError, match=r"1 chunks were reported written, expected one from each of 2 sinks"
            ),
            staged_report(backend.store, "r1") as staging,
        ):
            sinks = staging.ledger_sinks(2)
            staging.publish(PUBLISHED, [sinks[0].write(b"a\n")])
        assert backend.keys() == []

    def test_an_object_no_writer_reported_publishes_nothing(self, backend: Backend) -> None:
        with pytest.raises(StorageError) as raised, staged_report(backend.store, "r1") as staging:
            (sink,) = staging.ledger_sinks(1)
            written = sink.write(b"a\n")
            replace(sink, key=sink.key.replace("00000", "00007")).write(b"b\n")  # never reported
            staging.publish(PUBLISHED, [written])
        assert str(raised.value).endswith(": objects no writer reported: ['ledger/00007.npz']")
        assert backend.keys() == []


class TestLocalStaging:
    """On a local store a report is written under reports/.staging-<id>/ and moved into place."""

    def test_nothing_appears_under_the_report_id_until_the_manifest_is_written(self, tmp_path: Path) -> None:
        store = LocalStore(tmp_path)
        with staged_report(store, "r1") as staging:
            (sink,) = staging.ledger_sinks(1)
            sink.write(b"{}\n")
            assert [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()] == [
                "reports/.staging-r1/ledger/00000.npz"
            ]
            assert list_reports(store) == []
            staging.publish(PUBLISHED, [WrittenObject(sink.key, 3)])
        assert list_reports(store) == ["r1"]
        assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == ["r1"]

    def test_staging_killed_after_its_manifest_is_no_report_and_gc_removes_it(self, tmp_path: Path) -> None:
        store = LocalStore(tmp_path)
        for name in ("findings.json", "manifest.json"):
            store.put(f"reports/.staging-r1/{name}", b"{}", "application/json")
        assert list_reports(store) == []
        with pytest.raises(StorageError, match="is not a valid id"):
            read_report_part(store, ".staging-r1", REPORT_PARTS["findings"])
        assert collect_garbage(store, SAFE_AGE_SECONDS) == []  # young: could be a live run
        assert len(collect_garbage(store, 0, now=float("inf"))) == 2
        assert list(tmp_path.iterdir()) == []

    def test_an_interrupt_after_the_move_removes_the_report(self, tmp_path: Path) -> None:
        store = LocalStore(tmp_path)
        with pytest.raises(KeyboardInterrupt), staged_report(store, "r1") as staging:
            staging.publish(PUBLISHED)
            raise KeyboardInterrupt  # e.g. SIGINT before the REPORT_ID was printed
        assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_local_reports_are_as_readable_as_the_umask_allows(tmp_path: Path, umask: int) -> None:
    previous = os.umask(umask)
    try:
        store = LocalStore(tmp_path / "store")
        publish_report(store, "r1", PARTS)
    finally:
        os.umask(previous)
    folder = tmp_path / "store" / "reports" / "r1"
    for path in [folder, folder.parent, *folder.iterdir()]:
        expected = (0o777 if path.is_dir() else 0o666) & ~umask
        assert stat.S_IMODE(path.stat().st_mode) == expected, path


class TestSources:
    def test_dataset_id_resolves_under_datasets(self, backend: Backend) -> None:
        backend.put("datasets/ds_01H/labels/b.txt", b"0 0.5 0.5 0.1 0.1\n")
        backend.put("datasets/ds_01H/labels/a.txt", b"")
        backend.put("datasets/ds_01H/data.yaml", b"names: [cat]\n")
        backend.put("datasets/ds_01Hx/other.txt", b"not part of ds_01H")
        source = resolve_dataset("ds_01H", backend.store)
        assert source.is_dir()
        files = source.files()
        assert names(files) == ["data.yaml", "a.txt", "b.txt"]
        assert [f.read_bytes() for f in files] == [b"names: [cat]\n", b"", b"0 0.5 0.5 0.1 0.1\n"]

    def test_unknown_dataset_id_is_refused_naming_the_reference(self, backend: Backend) -> None:
        with pytest.raises(StorageError, match="dataset 'ds_missing': no such file or folder, and the store"):
            resolve_dataset("ds_missing", backend.store)

    def test_keys_with_spaces_and_unicode(self, backend: Backend) -> None:
        backend.put("datasets/ds_2/my data/gt é.json", b'{"images": []}')
        backend.put("datasets/ds_2/a b/ü 1.txt", b"\xe2\x9c\x93")
        folder = resolve_dataset("ds_2", backend.store)
        assert names(folder.files()) == ["ü 1.txt", "gt é.json"]
        file = resolve_dataset(backend.reference("datasets/ds_2/my data/gt é.json"), backend.store)
        assert not file.is_dir()
        assert file.basename == "gt é.json"
        assert file.read_bytes() == b'{"images": []}'

    def test_folder_listing_is_recursive_and_sorted_by_path_segments(self, backend: Backend) -> None:
        keys = ["a b/x", "a/b", "a-c", "a.d", "a/z/deep/er", "B", "_"]
        for key in keys:
            backend.put(f"shards/{key}", key.encode())
        files = resolve_dataset(backend.reference("shards"), backend.store).files()
        expected = sorted(keys, key=lambda key: key.split("/"))
        assert [f.read_bytes().decode() for f in files] == expected

    @pytest.mark.parametrize("suffix", ["", "/"])
    def test_folder_reference_with_or_without_slash(self, backend: Backend, suffix: str) -> None:
        backend.put("shards/part-0.jsonl", b"{}\n")
        backend.put("shards/part-1.jsonl", b"{}\n{}\n")
        source = resolve_dataset(backend.reference("shards") + suffix, backend.store)
        assert source.is_dir()
        assert names(source.files()) == ["part-0.jsonl", "part-1.jsonl"]
        assert source.basename == "shards"

    def test_missing_file_reference(self, backend: Backend) -> None:
        with pytest.raises(StorageError, match="no such"):
            resolve_dataset(backend.reference("nope.json"), backend.store).read_bytes()

    def test_a_file_is_read_in_ranges_from_other_processes_where_the_backend_can(
        self, backend: Backend
    ) -> None:
        """Forked workers read their own pieces of a big dataset file; a rewritten
        file is seen as changed. A backend without ranged reads (flat) reads files whole."""
        content = bytes(range(256)) * 40
        backend.put("big.json", content)
        ranged = resolve_dataset(backend.reference("big.json"), backend.store).ranged()
        if isinstance(backend.store, (LocalStore, S3Store)):
            assert ranged is not None
        if ranged is None:
            return
        assert ranged.size == len(content) and ranged.unchanged()
        ranges = [(0, 7), (5000, 5003), (len(content) - 4, len(content) + 50), (9, 9)]
        read = list(forked_map(lambda bounds: ranged.read(*bounds), ranges, 2))
        assert read == [content[start:stop] for start, stop in ranges]
        backend.put("big.json", content[::-1])
        assert not ranged.unchanged()
        backend.put("folder/a.json", content)
        assert resolve_dataset(backend.reference("folder") + "/", backend.store).ranged() is None

    def test_file_streams_in_chunks_and_lines(self, backend: Backend) -> None:
        lines = [f'{{"line": {i}, "pad": "{"x" * 100}"}}\n'.encode() for i in range(30_000)]
        backend.put("big.jsonl", b"".join(lines))  # ~3.4 MB: several network reads
        source = resolve_dataset(backend.reference("big.jsonl"), backend.store)
        with source.open() as stream:
            assert isinstance(stream, io.BufferedIOBase)
            assert stream.read(10) == lines[0][:10]
            assert stream.readline() == lines[0][10:]
            assert list(stream) == lines[1:]
        assert source.read_bytes() == b"".join(lines)


class TestBackendChoice:
    @pytest.mark.parametrize("uri", ["store", "./a/b", "/abs/store", "file:///abs/store", "C:\\store"])
    def test_paths_and_file_uris_are_local(self, uri: str) -> None:
        assert type(open_store(uri)) is LocalStore

    def test_file_uri_is_the_path(self, tmp_path: Path) -> None:
        open_store(f"file://{tmp_path}").put("k", b"v", "text/plain")
        assert (tmp_path / "k").read_bytes() == b"v"

    def test_s3_uris_are_s3(self, s3_env: str) -> None:
        store = open_store("S3://bucket/prefix")
        assert type(store) is S3Store and store.uri == "s3://bucket/prefix"

    def test_unknown_scheme_is_one_line(self) -> None:
        with pytest.raises(StorageError, match=r"^'gs://b/x': unsupported storage scheme 'gs' \(expected"):
            open_store("gs://b/x")
        with pytest.raises(StorageError, match="unsupported storage scheme 'https'"):
            resolve_dataset("https://example.com/gt.json", LocalStore(Path("unused")))


class TestS3Store:
    def test_chunks_have_the_part_content_type(self, s3_bucket: str, s3_client: Any) -> None:
        store = S3Store.from_uri(f"s3://{s3_bucket}/{PREFIX}")
        publish_report(store, "r1", {}, chunks=[b"{}\n", b"{}\n"])
        for index in range(2):
            key = f"{PREFIX}/reports/r1/ledger/{index:05d}.npz"
            assert (
                s3_client.head_object(Bucket=s3_bucket, Key=key)["ContentType"] == "application/octet-stream"
            )

    def test_streamed_put_is_resent_on_retry(self, s3_bucket: str, fault_proxy: FaultProxy) -> None:
        store = S3Store.from_uri(f"s3://{s3_bucket}/{PREFIX}")
        fault_proxy.fail_next(2, method="PUT")
        store.put("lines.jsonl", (b"%d\n" % i for i in range(10_000)), "application/x-ndjson")
        assert store.get("lines.jsonl") == b"".join(b"%d\n" % i for i in range(10_000))

    def test_chunk_failing_for_good_leaves_nothing(
        self, s3_bucket: str, s3_client: Any, fault_proxy: FaultProxy
    ) -> None:
        store = S3Store.from_uri(f"s3://{s3_bucket}/{PREFIX}")
        fault_proxy.fail_matching("PUT", r"/ledger/00001\.npz$")
        with pytest.raises(StorageError, match=r"ledger/00001\.npz: cannot write: server error 500"):
            publish_report(store, "r1", PARTS, chunks=[b"a\n", b"b\n", b"c\n"])
        fault_proxy.heal()
        assert s3_client.list_objects_v2(Bucket=s3_bucket).get("KeyCount") == 0

    def test_parts_have_their_content_type(self, s3_bucket: str, s3_client: Any) -> None:
        publish_report(S3Store.from_uri(f"s3://{s3_bucket}/{PREFIX}"), "r1", PARTS)
        for part in (REPORT_PARTS[key] for key in PARTS):
            head = s3_client.head_object(Bucket=s3_bucket, Key=f"{PREFIX}/reports/r1/{part.name}")
            assert head["ContentType"] == part.content_type
        head = s3_client.head_object(Bucket=s3_bucket, Key=f"{PREFIX}/reports/r1/manifest.json")
        assert head["ContentType"] == "application/json"

    def test_manifest_is_uploaded_last(self, s3_bucket: str, fault_proxy: FaultProxy) -> None:
        publish_report(S3Store.from_uri(f"s3://{s3_bucket}/{PREFIX}"), "r1", PARTS)
        uploaded = [path.rsplit("/", 1)[-1] for path in fault_proxy.paths("PUT")]
        assert uploaded == ["findings.json", "report.html", "manifest.json"]

    def test_prefix_with_spaces_and_unicode(self, s3_bucket: str, s3_client: Any) -> None:
        store = S3Store.from_uri(f"s3://{s3_bucket}/team é/run 1/")
        assert store.uri == f"s3://{s3_bucket}/team é/run 1"
        publish_report(store, "r1", PARTS)
        assert read_report_part(store, "r1", REPORT_PARTS["findings"]) == PARTS["findings"]
        assert s3_client.get_object(Bucket=s3_bucket, Key="team é/run 1/reports/r1/report.html")

    def test_store_at_the_bucket_root(self, s3_bucket: str, s3_client: Any) -> None:
        store = S3Store.from_uri(f"s3://{s3_bucket}")
        s3_client.put_object(Bucket=s3_bucket, Key="datasets/ds_1/gt.json", Body=b"[]")
        assert names(store.dataset("ds_1").files()) == ["gt.json"]
        publish_report(store, "r1", PARTS)
        assert s3_client.get_object(Bucket=s3_bucket, Key="reports/r1/manifest.json")

    def test_folder_markers_are_not_files(self, s3_bucket: str, s3_client: Any) -> None:
        for key in ("labels/", "labels/sub/", "labels/sub/a.txt"):
            s3_client.put_object(Bucket=s3_bucket, Key=key, Body=b"" if key.endswith("/") else b"x")
        source = resolve_dataset(f"s3://{s3_bucket}/labels/", S3Store.from_uri(f"s3://{s3_bucket}"))
        assert names(source.files()) == ["a.txt"]

    def test_an_object_wins_over_a_folder_of_the_same_name(self, s3_bucket: str, s3_client: Any) -> None:
        s3_client.put_object(Bucket=s3_bucket, Key="gt", Body=b"file")
        s3_client.put_object(Bucket=s3_bucket, Key="gt/inner.json", Body=b"inner")
        source = resolve_dataset(f"s3://{s3_bucket}/gt", S3Store.from_uri(f"s3://{s3_bucket}"))
        assert not source.is_dir()
        assert source.read_bytes() == b"file"

    @pytest.mark.parametrize(
        ("ours", "aws", "expected"),
        [(None, None, DEFAULT_MAX_ATTEMPTS), ("2", "7", 2), (None, "7", 7), ("0", None, 1), ("99", None, 10)],
    )
    def test_attempts_are_bounded(
        self, monkeypatch: pytest.MonkeyPatch, ours: str | None, aws: str | None, expected: int
    ) -> None:
        for variable, value in (("PRELABEL_S3_MAX_ATTEMPTS", ours), ("AWS_MAX_ATTEMPTS", aws)):
            if value is None:
                monkeypatch.delenv(variable, raising=False)
            else:
                monkeypatch.setenv(variable, value)
        assert max_attempts() == expected

    def test_attempts_must_be_a_number(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("PRELABEL_S3_MAX_ATTEMPTS", "many")
        with pytest.raises(StorageError, match=r"^PRELABEL_S3_MAX_ATTEMPTS='many' is not a whole number"):
            S3Store.from_uri("s3://bucket/prefix")

    def test_not_an_s3_uri(self, s3_env: str) -> None:
        with pytest.raises(StorageError, match=r"^'s3:///key' is not an S3 URI: expected s3://bucket/key$"):
            S3Store.from_uri("s3:///key")


def one_line(error: pytest.ExceptionInfo[StorageError]) -> str:
    message = str(error.value)
    assert "\n" not in message
    assert error.value.__cause__ is not None  # chained to the boto error, for debugging
    return message


class TestS3Faults:
    def test_bucket_does_not_exist(self, s3_env: str) -> None:
        store = S3Store.from_uri("s3://no-such-bucket-here/runs")
        with pytest.raises(StorageError) as error:
            publish_report(store, "r1", PARTS)
        assert one_line(error) == (
            "cannot write report 'r1': s3://no-such-bucket-here/runs/reports/r1/findings.json: "
            "cannot write: bucket 'no-such-bucket-here' does not exist (NoSuchBucket)"
        )

    def test_dataset_in_a_bucket_that_does_not_exist(self, s3_env: str) -> None:
        source = resolve_dataset("s3://no-such-bucket-here/gt.json", S3Store.from_uri("s3://x"))
        with pytest.raises(StorageError) as error:
            source.read_bytes()
        assert one_line(error) == (
            "s3://no-such-bucket-here/gt.json: cannot read: "
            "bucket 'no-such-bucket-here' does not exist (NoSuchBucket)"
        )
        with pytest.raises(StorageError) as error:
            source.is_dir()
        assert one_line(error) == (
            "s3://no-such-bucket-here/gt.json: cannot look up the folder: "
            "bucket 'no-such-bucket-here' does not exist (NoSuchBucket)"
        )

    def test_unknown_access_key(
        self, s3_bucket: str, moto_auth: tuple[str, str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAUNKNOWNKEY000000")
        with pytest.raises(StorageError) as error:
            publish_report(S3Store.from_uri(f"s3://{s3_bucket}/{PREFIX}"), "r1", PARTS)
        assert one_line(error) == (
            f"cannot write report 'r1': s3://{s3_bucket}/{PREFIX}/reports/r1/findings.json: "
            "cannot write: credentials refused: "
            "the access key id is unknown (InvalidAccessKeyId); check AWS_ACCESS_KEY_ID or AWS_PROFILE"
        )

    def test_wrong_secret(
        self, s3_bucket: str, moto_auth: tuple[str, str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        key_id, secret = moto_auth
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", key_id)
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
        source = resolve_dataset(f"s3://{s3_bucket}/gt é.json", S3Store.from_uri(f"s3://{s3_bucket}"))
        with pytest.raises(StorageError) as error:
            source.read_bytes()
        assert one_line(error) == (
            f"s3://{s3_bucket}/gt é.json: cannot read: credentials refused: the secret key does not match "
            "the access key id (SignatureDoesNotMatch); check AWS_SECRET_ACCESS_KEY"
        )
        with pytest.raises(StorageError, match=r"\(SignatureDoesNotMatch\)"):
            publish_report(S3Store.from_uri(f"s3://{s3_bucket}/{PREFIX}"), "r1", PARTS)
        # The right secret works, and sees that nothing was written.
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
        with pytest.raises(StorageError, match=r": no report 'r1'$"):
            read_report_part(S3Store.from_uri(f"s3://{s3_bucket}/{PREFIX}"), "r1", REPORT_PARTS["html"])

    def test_no_credentials_at_all(self, s3_bucket: str, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("AWS_ACCESS_KEY_ID")
        monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
        with pytest.raises(
            StorageError,
            match=r"^cannot read report 'r1': s3://.*/manifest\.json: cannot read: no usable credentials",
        ):
            read_report_part(S3Store.from_uri(f"s3://{s3_bucket}/{PREFIX}"), "r1", REPORT_PARTS["html"])

    def test_endpoint_down(self, s3_bucket: str, endpoint_down: str) -> None:
        with pytest.raises(StorageError) as error:
            publish_report(S3Store.from_uri(f"s3://{s3_bucket}/{PREFIX}"), "r1", PARTS)
        assert one_line(error) == (
            f"cannot write report 'r1': s3://{s3_bucket}/{PREFIX}/reports/r1/manifest.json: "
            f"cannot look up: endpoint down: cannot connect to {endpoint_down} (3 attempts)"
        )
        with pytest.raises(StorageError) as error:
            S3Store.from_uri(f"s3://{s3_bucket}/{PREFIX}").dataset("ds_1").files()
        assert one_line(error) == (
            f"s3://{s3_bucket}/{PREFIX}/datasets/ds_1/: cannot look up the folder: "
            f"endpoint down: cannot connect to {endpoint_down} (3 attempts)"
        )

    def test_500_for_a_while_then_recovering(self, s3_bucket: str, fault_proxy: FaultProxy) -> None:
        store = S3Store.from_uri(f"s3://{s3_bucket}/{PREFIX}")
        fault_proxy.fail_next(2, method="PUT")
        publish_report(store, "r1", PARTS)
        fault_proxy.fail_next(2, method="GET")
        assert read_report_part(store, "r1", REPORT_PARTS["html"]) == PARTS["html"]
        assert [seen.status for seen in fault_proxy.seen].count(500) == 4

    def test_dataset_read_recovers_from_500s(
        self, s3_bucket: str, s3_client: Any, fault_proxy: FaultProxy
    ) -> None:
        s3_client.put_object(Bucket=s3_bucket, Key="data/gt.json", Body=b'{"images": []}')
        fault_proxy.fail_next(2)
        source = resolve_dataset(f"s3://{s3_bucket}/data/gt.json", S3Store.from_uri(f"s3://{s3_bucket}"))
        assert source.read_bytes() == b'{"images": []}'

    def test_500_for_good_while_reading(
        self, s3_bucket: str, s3_client: Any, fault_proxy: FaultProxy
    ) -> None:
        s3_client.put_object(Bucket=s3_bucket, Key="data/gt.json", Body=b"{}")
        fault_proxy.fail_matching("GET", r"/data/gt\.json$")
        with pytest.raises(StorageError) as error:
            resolve_dataset(
                f"s3://{s3_bucket}/data/gt.json", S3Store.from_uri(f"s3://{s3_bucket}")
            ).read_bytes()
        assert one_line(error) == (
            f"s3://{s3_bucket}/data/gt.json: cannot read: server error 500 (InternalError) after 3 attempts"
        )

    @pytest.mark.parametrize("failing", ["report.html", "manifest.json"])
    def test_failing_for_good_mid_upload_leaves_nothing_visible(
        self, s3_bucket: str, s3_client: Any, fault_proxy: FaultProxy, failing: str
    ) -> None:
        store = S3Store.from_uri(f"s3://{s3_bucket}/{PREFIX}")
        fault_proxy.fail_matching("PUT", rf"/reports/r1/{failing}$")
        with pytest.raises(StorageError) as error:
            publish_report(store, "r1", PARTS)
        assert one_line(error) == (
            f"cannot write report 'r1': s3://{s3_bucket}/{PREFIX}/reports/r1/{failing}: "
            "cannot write: server error 500 (InternalError) after 3 attempts"
        )
        fault_proxy.heal()
        with pytest.raises(StorageError, match=r": no report 'r1'$"):
            read_report_part(store, "r1", REPORT_PARTS["findings"])
        # The parts already uploaded were deleted again, best effort.
        assert s3_client.list_objects_v2(Bucket=s3_bucket).get("KeyCount") == 0
