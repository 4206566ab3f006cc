"""A shard's pre-label chunk trimmed to what a policy keeps: each kept prediction with its own mask,
and a chunk from which nothing is trimmed given back as it was, unread past its scores."""

from __future__ import annotations

import numpy as np

from handler.boxes import BoxTable, MaskRuns
from handler.engine.npz_chunks import loaded
from handler.engine.pre_label_boxes import ChunkImages, Floors, candidate_chunk, masks_of, trimmed

IMAGES = ChunkImages(["a", "b"], ["cat", "dog"], np.array([3.0, 3.0]), np.array([2.0, 2.0]), False)


def _chunk() -> bytes:
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


def test_a_trimmed_chunk_keeps_each_kept_prediction_with_its_mask() -> None:
    chunk = loaded(trimmed(_chunk(), Floors({"cat": 0.5}, 0.0)))
    assert chunk["confidence"].tolist() == [0.3, 0.9]
    masks = masks_of(chunk)
    assert masks is not None
    assert masks.counts.tolist() == [0, 6, 2, 2, 2] and masks.offsets.tolist() == [0, 2, 5]


def test_a_chunk_that_keeps_every_prediction_is_given_back_as_it_was() -> None:
    content = _chunk()
    assert trimmed(content, Floors({"cat": 0.2}, 0.3)) is content
