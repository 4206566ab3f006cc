"""A shard's pre-label chunk, made as it is written and read back as numpy wrote it; trimmed to
what a policy keeps: each kept prediction with its own mask, and a chunk from which nothing is
trimmed given back as it was, unread past its scores."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from handler.boxes import BoxTable, MaskRuns
from handler.engine.npz_chunks import StreamedChunk, loaded
from handler.engine.pre_label_boxes import ChunkImages, Floors, candidate_chunk, masks_of, trimmed

IMAGES = ChunkImages(["a", "b"], ["cat", "dog"], np.array([3.0, 3.0]), np.array([2.0, 2.0]), False)


def _streamed() -> StreamedChunk:
    # Three 2 x 3 masks, each of its own runs: rows 0 and 2 are cats, row 1 a dog.
    masks = MaskRuns(
        np.array([1, 2, 3, 0, 6, 2, 2, 2], dtype=np.uint32),
        np.array([0, 3, 5, 8]),
        np.full(3, 2),
        np.full(3, 3),
    )
    table = BoxTable.build(
        [[0, 0, 1, 1], [0, 0, 2, 2], [1, 0, 3, 2]],
        [0, 1, 0],
        [0, 0, 1],
        confidence=[0.2, 0.3, 0.9],
        masks=masks,
    )
    return candidate_chunk(table, IMAGES, 0.0)


def _chunk() -> bytes:
    return bytes(_streamed())


def test_a_trimmed_chunk_keeps_each_kept_prediction_with_its_mask() -> None:
    chunk = loaded(bytes(trimmed(_chunk(), Floors({"cat": 0.5}, 0.0))))
    assert chunk["confidence"].tolist() == [0.3, 0.9]
    masks = masks_of(chunk)
    assert masks is not None
    assert masks.counts.tolist() == [0, 6, 2, 2, 2] and masks.offsets.tolist() == [0, 2, 5]


def test_a_chunk_that_keeps_every_prediction_is_given_back_as_it_was() -> None:
    content = _chunk()
    assert trimmed(content, Floors({"cat": 0.2}, 0.3)) is content


def test_a_chunk_held_in_the_process_trims_as_its_written_bytes_do() -> None:
    """The pre-label candidates of shards run in the process are trimmed from their columns."""
    for floors in (Floors({"cat": 0.5}, 0.0), Floors({"dog": 0.5}, 0.1), Floors({}, 1.0)):
        held, written = trimmed(_streamed(), floors), trimmed(_chunk(), floors)
        assert bytes(held) == bytes(written)
    held_whole = _streamed()
    assert trimmed(held_whole, Floors({"cat": 0.2}, 0.3)) is held_whole


COLUMN_TYPES = (np.uint8, np.uint32, np.int32, np.int64, np.float32, np.float64, np.bool_)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.from_regex(r"[a-z_]{1,12}", fullmatch=True),
        st.tuples(st.sampled_from(COLUMN_TYPES), st.lists(st.integers(0, 5), max_size=3)),
        max_size=5,
    )
)
def test_a_streamed_chunk_reads_back_as_numpy_writes_it(drawn: dict[str, tuple[type, list[int]]]) -> None:
    """Any column's dtype, shape (a single value, none, several axes) and values, through
    `np.load`; its size is the bytes it makes."""
    columns = {
        key: np.arange(int(np.prod(shape)), dtype=np.int64).astype(dtype).reshape(shape)
        for key, (dtype, shape) in drawn.items()
    }
    streamed = StreamedChunk(columns)
    content = bytes(streamed)
    assert len(content) == len(streamed)
    back = loaded(content)
    assert back.keys() == columns.keys()
    for key, values in columns.items():
        assert back[key].dtype == values.dtype and back[key].shape == values.shape
        assert np.array_equal(back[key], values)
