"""A run's chunks written on a second thread (`writing_behind`): each one in the store, at the size
said at once, when the block ends; a write that fails raises there, as the store's error."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from handler.engine.npz_chunks import StreamedChunk, loaded
from handler.errors import StorageError
from handler.execution.run import HeldChunks, writing_behind
from handler.storage import ObjectSink


class _Traced:
    """A chunk that notes the threads that make its bytes (the writer's, not the caller's)."""

    def __init__(self, rows: int) -> None:
        self.chunk = StreamedChunk(
            {"values": np.arange(rows, dtype=np.int64), "flags": np.ones(rows, dtype=bool)}
        )
        self.threads: list[int] = []

    def __iter__(self) -> Iterator[bytes]:
        self.threads.append(threading.get_ident())
        return iter(self.chunk)

    def __len__(self) -> int:
        return len(self.chunk)


def test_chunks_are_written_on_another_thread_by_the_end_of_the_block(tmp_path: Path) -> None:
    chunks = [_Traced(rows) for rows in (0, 3, 300_000)]
    with writing_behind() as write:
        said = [
            write(ObjectSink(str(tmp_path), f"c/{i}.npz", "application/zip"), c) for i, c in enumerate(chunks)
        ]
    for i, (chunk, written) in enumerate(zip(chunks, said, strict=True)):
        content = (tmp_path / "c" / f"{i}.npz").read_bytes()
        assert (written.key, written.size) == (f"c/{i}.npz", len(content))
        assert loaded(content)["values"].tolist() == chunk.chunk.columns["values"].tolist()
        assert chunk.threads and threading.get_ident() not in chunk.threads


def test_a_write_that_fails_raises_the_stores_error_when_the_block_ends(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file where the chunk's folder would go")
    finished = []
    with pytest.raises(StorageError, match="taken"), writing_behind() as write:
        write(ObjectSink(str(tmp_path), "taken/0.npz", "application/zip"), _Traced(10))
        write(ObjectSink(str(tmp_path), "fine/1.npz", "application/zip"), _Traced(10))
        finished.append(True)  # the block goes on while the writes are made
    assert finished == [True]
    assert (tmp_path / "fine" / "1.npz").is_file()  # every write is waited for


def test_a_block_that_fails_waits_for_the_write_under_way(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="the search failed"), writing_behind() as write:
        write(ObjectSink(str(tmp_path), "c/0.npz", "application/zip"), _Traced(1_000_000))
        raise RuntimeError("the search failed")
    # Nothing is left writing after the block: no temporary file, the chunk whole or not at all.
    left = sorted(p.name for p in (tmp_path / "c").iterdir()) if (tmp_path / "c").exists() else []
    assert left in ([], ["0.npz"])


def test_held_chunks_are_kept_unwritten_and_bytes_are_written_at_once(tmp_path: Path) -> None:
    held, chunk = HeldChunks(), StreamedChunk({"values": np.arange(5, dtype=np.int64)})
    kept = held.write(ObjectSink(str(tmp_path), "p/0.npz", "application/zip"), chunk)
    written = held.write(ObjectSink(str(tmp_path), "p/1.npz", "application/zip"), b"PK written")
    assert (kept.key, kept.size) == ("p/0.npz", len(chunk)) and held.contents == {"p/0.npz": chunk}
    assert not (tmp_path / "p" / "0.npz").exists()
    assert (tmp_path / "p" / "1.npz").read_bytes() == b"PK written" and written.size == len(b"PK written")
